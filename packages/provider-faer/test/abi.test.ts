// The ABI table (native/src/abi.mjs, #40): the committed header and declaration are what the
// generator makes of it, its hash is the one the header carries, and the built addon carries.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { abiHash } from '@tenferro/core';
import { abiDeclaration, abiHeader, abiHash as generatorHash, generateAbi } from '@tenferro/native/abi';
import { describe, expect, it } from 'vitest';
import { ABI } from '../native/src/abi.mjs';
import { loadFaer } from '../src/native/load.js';

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
    const s = loadFaer();
    expect(s.available, s.available ? '' : s.reasons.join('; ')).toBe(true);
    if (s.available) expect(s.binding.abiHash).toBe(abiHash(ABI));
  });
});

describe('the ABI generator (@tenferro/native/abi)', () => {
  const table = { namespace: 'demo::abi', enums: { Status: ['Ok', 'Bad'], Desc: ['dtype', 'offA'] }, constants: { MaxRank: 8, Big: 2 ** 40 }, prefixed: ['Status'] };

  it('numbers each enum in table order, prefixes the listed ones, counts them, and types the table', () => {
    const h = abiHeader(table);
    expect(h).toContain('namespace demo::abi {');
    expect(h).toContain(`constexpr char kAbiHash[] = "${abiHash(table)}";`);
    expect(h).toContain('enum Status : int {\n  kStatusOk = 0,\n  kStatusBad = 1,\n};\nconstexpr int kStatusCount = 2;');
    expect(h).toContain('enum Desc : int {\n  kDtype = 0,\n  kOffA = 1,\n};\nconstexpr int kDescCount = 2;');
    expect(h).toContain('constexpr int kMaxRank = 8;\nconstexpr long long kBig = 1099511627776;');
    expect(abiDeclaration(table)).toContain('readonly Desc: readonly ["dtype", "offA"];');
  });

  it('refuses a table whose C++ names would collide or are not identifiers, naming what is wrong', () => {
    expect(() => abiHeader({ namespace: 'x', enums: { A: ['ok'], B: ['Ok'] } })).toThrow('kOk is defined twice');
    expect(() => abiHeader({ namespace: 'x', enums: { A: ['a-b'] } })).toThrow('enum A: name a-b');
    expect(() => abiHeader({ namespace: 'x', constants: { N: 1.5 } })).toThrow('constant N must be a safe integer');
    expect(() => abiHeader({ namespace: 'x', enums: { A: ['a'] }, prefixed: ['B'] } as never)).toThrow('prefixed must list enums of the table');
    expect(() => abiHeader({ namespace: 'Bad Name' })).toThrow('namespace');
  });
});
