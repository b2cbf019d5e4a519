// The ABI table (native/src/abi.mjs, #40): the committed header and declaration are what the
// generator makes of it, its hash is the one the header carries, and the built addon carries
// (the suite: @tenferro/native-build/abi-suite).
import { describeAbiTable } from '@tenferro/native-build/abi-suite';
import * as generator from '@tenferro/native/abi';
import { abiHash } from '@tenferro/core';
import { ABI } from '../native/src/abi.mjs';
import { loadFaer } from '../src/native/load.js';
import { describe, expect, it } from 'vitest';

describeAbiTable({ nativeDir: new URL('../native/', import.meta.url), abi: ABI, load: loadFaer, abiHash, generator });

describe('the ABI generator (@tenferro/native/abi)', () => {
  const table = { namespace: 'demo::abi', enums: { Status: ['Ok', 'Bad'], Desc: ['dtype', 'offA'] }, constants: { MaxRank: 8, Big: 2 ** 40 }, prefixed: ['Status'] };

  it('numbers each enum in table order, prefixes the listed ones, counts them, and types the table', () => {
    const h = generator.abiHeader(table);
    expect(h).toContain('namespace demo::abi {');
    expect(h).toContain(`constexpr char kAbiHash[] = "${abiHash(table)}";`);
    expect(h).toContain('enum Status : int {\n  kStatusOk = 0,\n  kStatusBad = 1,\n};\nconstexpr int kStatusCount = 2;');
    expect(h).toContain('enum Desc : int {\n  kDtype = 0,\n  kOffA = 1,\n};\nconstexpr int kDescCount = 2;');
    expect(h).toContain('constexpr int kMaxRank = 8;\nconstexpr long long kBig = 1099511627776;');
    expect(generator.abiDeclaration(table)).toContain('readonly Desc: readonly ["dtype", "offA"];');
  });

  it('refuses a table whose C++ names would collide or are not identifiers, naming what is wrong', () => {
    expect(() => generator.abiHeader({ namespace: 'x', enums: { A: ['ok'], B: ['Ok'] } })).toThrow('kOk is defined twice');
    expect(() => generator.abiHeader({ namespace: 'x', enums: { A: ['a-b'] } })).toThrow('enum A: name a-b');
    expect(() => generator.abiHeader({ namespace: 'x', constants: { N: 1.5 } })).toThrow('constant N must be a safe integer');
    expect(() => generator.abiHeader({ namespace: 'x', enums: { A: ['a'] }, prefixed: ['B'] } as never)).toThrow('prefixed must list enums of the table');
    expect(() => generator.abiHeader({ namespace: 'Bad Name' })).toThrow('namespace');
  });
});
