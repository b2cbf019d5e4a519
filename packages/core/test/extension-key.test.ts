import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuProviderBundle, defineExtensionKey, referenceGemmProvider, referenceLayoutProvider } from '../src/index.js';

describe('defineExtensionKey: identity-by-name (R53)', () => {
  it('the same name always gives the same frozen key; different names differ', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }).filter((s) => s.trim() !== ''), fc.string({ minLength: 1 }).filter((s) => s.trim() !== ''), (a, b) => {
        const ka = defineExtensionKey<number>(`test.ext.${a}`);
        expect(defineExtensionKey<number>(`test.ext.${a}`)).toBe(ka);
        expect(Object.isFrozen(ka)).toBe(true);
        expect(ka.name).toBe(`test.ext.${a}`);
        if (a !== b) expect(defineExtensionKey(`test.ext.${b}`)).not.toBe(ka);
      }),
    );
  });

  it('a key defined by a second copy of a package (a fresh module instance) reads what the first stored', async () => {
    const first = defineExtensionKey<string>('test.ext.copies');
    // A second copy of core's extension module (the built one, a distinct module instance with its own closure).
    const url = `${new URL('../dist/extension/extension-key.js', import.meta.url).href}?copy=${Date.now()}`;
    const copy = (await import(/* @vite-ignore */ url)) as typeof import('../src/extension/extension-key.js');
    expect(copy.defineExtensionKey).not.toBe(defineExtensionKey);
    const second = copy.defineExtensionKey<string>('test.ext.copies');
    expect(second).toBe(first);
    const bundle = CpuProviderBundle.builder('faer').gemmProvider(referenceGemmProvider).layoutTransformProvider(referenceLayoutProvider).extension(first, 'v').build();
    expect(bundle.extension(second)).toBe('v');
  });

  it('bad names are InvalidArgument', () => {
    for (const bad of ['', '   ', 3, undefined, null]) {
      expect(() => defineExtensionKey(bad as string)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    }
  });
});
