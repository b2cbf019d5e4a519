// The ABI-table checks every native package runs (#40), in one place: the committed
// abi.generated.h and abi.d.mts are what @tenferro/native's generator makes of native/src/abi.mjs,
// the header carries the hash the loader computes (os's abiHash, which core re-exports), and the
// built addon exports that hash. Called from each package's test/abi.test.ts under vitest.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Register the suite for the package whose `native/` folder is `nativeDir` (a file URL ending in
 * `/`): `abi` is its table (`native/src/abi.mjs`'s `ABI`), `load()` its loader's answer, `abiHash`
 * the loader's hash function (`@tenferro/os`'s, or core's re-export) and `generator` the module
 * `@tenferro/native/abi` as the package resolves it (this private package depends on neither).
 */
export function describeAbiTable({ nativeDir, abi, load, abiHash, generator }) {
  const table = fileURLToPath(new URL('src/abi.mjs', nativeDir));
  const header = fileURLToPath(new URL('src/abi.generated.h', nativeDir));
  describe('the ABI table', () => {
    it('the committed abi.generated.h and abi.d.mts are not stale (regenerate: node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs)', async () => {
      expect(await generator.generateAbi(table, { check: true })).toEqual([]);
    });

    it('the header carries the hash the loader computes, and the generator computes the same', () => {
      expect(generator.abiHash(abi)).toBe(abiHash(abi));
      expect(readFileSync(header, 'utf8')).toContain(`constexpr char kAbiHash[] = "${abiHash(abi)}";`);
    });

    it('the built addon exports that hash', () => {
      const s = load();
      expect(s.available, s.available ? '' : s.reasons.join('; ')).toBe(true);
      if (s.available) expect(s.binding.abiHash).toBe(abiHash(abi));
    });
  });
}
