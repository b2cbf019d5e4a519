// The ABI table (native/src/abi.mjs, #40): the committed header and declaration are what the
// generator makes of it, its hash is the one the header carries, and the built addon carries.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { abiHash } from '../src/index.js';
import { abiHash as generatorHash, generateAbi } from '@tenferro/native/abi';
import { describe, expect, it } from 'vitest';
import { ABI } from '../native/src/abi.mjs';
import { loadOs } from '../src/load.js';

const TABLE = fileURLToPath(new URL('../native/src/abi.mjs', import.meta.url));
const HEADER = fileURLToPath(new URL('../native/src/abi.generated.h', import.meta.url));

describe('the ABI table', () => {
  it('the committed abi.generated.h and abi.d.mts are not stale (regenerate: node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs)', async () => {
    expect(await generateAbi(TABLE, { check: true })).toEqual([]);
  });

  it('the header carries the hash the loader computes, and the generator computes the same', () => {
    expect(generatorHash(ABI)).toBe(abiHash(ABI));
    expect(readFileSync(HEADER, 'utf8')).toContain(`constexpr char kAbiHash[] = "${abiHash(ABI)}";`);
  });

  it('the built addon exports that hash', () => {
    const s = loadOs();
    expect(s.available, s.available ? '' : s.reasons.join('; ')).toBe(true);
    if (s.available) expect(s.binding.abiHash).toBe(abiHash(ABI));
  });
});

