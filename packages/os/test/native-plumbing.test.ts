// No native package copies the plumbing of @tenferro/native (shared C++ headers, ABI tables,
// install bin) or of defineAddon (#40): scripts/checks/native-plumbing.mjs over the repository, and
// over a scratch tree with one copy of each kind, which it must name.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

interface Finding {
  file: string;
  line: number;
  what: string;
}
const repoRoot = join(import.meta.dirname, '../../..');
const { findCopiedPlumbing } = (await import(pathToFileURL(join(repoRoot, 'scripts/checks/native-plumbing.mjs')).href)) as {
  findCopiedPlumbing(root: string): Finding[];
};

const scratch = mkdtempSync(join(tmpdir(), 'tenferro-plumbing-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
function put(path: string, text: string): void {
  mkdirSync(dirname(join(scratch, path)), { recursive: true });
  writeFileSync(join(scratch, path), text);
}

describe('native plumbing', () => {
  it('no package of this repository copies it', () => {
    expect(findCopiedPlumbing(repoRoot)).toEqual([]);
  });

  it('names each kind of copy, and not the toolkit, comments or generated headers', () => {
    put('packages/p/native/src/a.cc', 'bool f() { return __builtin_cpu_supports("avx2"); }\n// __builtin_cpu_supports in a comment\n');
    put('packages/p/native/src/b.cc', 'const char* e = std::getenv("TENFERRO_P_ISA");\n');
    put('packages/p/native/src/c.cc', 'void g(Napi::Value v) { napi_get_typedarray_info(env, v, &t, &l, &d, nullptr, nullptr); }\n');
    put('packages/p/native/include/d.h', 'bool h(double v) { return v <= 9007199254740992.0; }\nbool i(double x) { return std::floor(x) != x; }\n');
    put('packages/p/native/src/e.h', 'enum Status : int { kOk = 0 };\n');
    put('packages/p/native/src/abi.generated.h', 'enum Status : int { kOk = 0 };\n');
    put('packages/p/src/native/binding.ts', 'export const S = Object.freeze({ Ok: 0, Bad: 1 });\nexport const DESC = { HEADER: 11 };\n');
    put('packages/p/scripts/install-native.mjs', '');
    put('packages/native/include/tenferro/isa.h', 'bool f() { return __builtin_cpu_supports("avx2"); }\n');
    expect(findCopiedPlumbing(scratch).map((f) => `${f.file}:${f.line} ${f.what.split(' (')[0]}`).sort()).toEqual([
      'packages/p/native/include/d.h:1 an exact-integer index check of its own',
      'packages/p/native/include/d.h:2 an exact-integer index check of its own',
      'packages/p/native/src/a.cc:1 a CPU feature check of its own',
      'packages/p/native/src/b.cc:1 an ISA override read of its own',
      'packages/p/native/src/c.cc:1 a typed-array reader of its own',
      'packages/p/native/src/e.h:1 a hand-written Status or Desc enum',
      'packages/p/scripts/install-native.mjs:1 an install script of its own',
      'packages/p/src/native/binding.ts:1 a hand-written status table',
      'packages/p/src/native/binding.ts:2 a hand-written descriptor length',
    ]);
  });
});
