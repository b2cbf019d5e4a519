// docs/contracts/provider-author-guide.md, followed as written (#40): every code block that names
// a file (```ts file=src/index.ts) is copied verbatim into an empty folder outside the repository,
// and the guide's own commands run there — `npm run abi && npm run build:native && npm test` (the
// ABI generator, node-gyp, tsc, the GEMM conformance kit at budgets 1 and 2 and the linalg kit)
// (step 5, `npm pack`, is provider-template.test.ts's: the template is these blocks). The
// folder's node_modules holds the workspace's packages (@tenferro/native unpacked from its packed
// tarball, as npm would install it; the others linked) and the third-party tools from the workspace's store, so nothing
// is downloaded. Before #40 the guide's provider, copied verbatim, failed the kit: its unit-stride
// check declined core's canonical retry of a 1×1 operand whose strides were (0, 0).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { pnpm: string; path: string; nodedir?: string };
const guide = readFileSync(join(root, 'docs/contracts/provider-author-guide.md'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'tenferro-guide-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The guide's blocks that name a file: path → content, in the guide's order. */
function filesOf(markdown: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of markdown.matchAll(/^```[a-z]+ file=(\S+)\n([\s\S]*?)^```$/gm)) {
    expect(files.has(m[1]!), `${m[1]} is shown twice`).toBe(false);
    files.set(m[1]!, m[2]!);
  }
  return files;
}

function run(command: string, cwd: string): { status: number | null; out: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: setup.path, NO_COLOR: '1', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  if (setup.nodedir) env.npm_config_nodedir = setup.nodedir;
  delete env.VITEST;
  delete env.VITEST_POOL_ID;
  delete env.VITEST_WORKER_ID;
  delete env.TENFERRO_TIER;
  const r = spawnSync('sh', ['-c', command], { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** node_modules as `npm install` leaves it for the guide's package.json (plus @tenferro/linalg, its linalg section's dev dependency). */
function nodeModules(app: string): void {
  const modules = join(app, 'node_modules');
  const link = (name: string, target: string) => {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(target, join(modules, name), 'dir');
  };
  for (const p of ['core', 'os', 'linalg']) link(`@tenferro/${p}`, join(root, 'packages', p));
  // @tenferro/native as npm installs it: its packed tarball, unpacked — so the guide's `npm run abi`
  // finds the generator only when the published files hold it.
  const tgz = join(work, 'tgz');
  const packed = run(`${JSON.stringify(setup.pnpm)} pack --pack-destination ${JSON.stringify(tgz)}`, join(root, 'packages/native'));
  expect(packed.status, packed.out).toBe(0);
  mkdirSync(join(modules, '@tenferro/native'), { recursive: true });
  const unpacked = run(`tar xzf ${JSON.stringify(join(tgz, readdirSync(tgz).find((f) => f.startsWith('tenferro-native-'))!))} --strip-components=1 -C ${JSON.stringify(join(modules, '@tenferro/native'))}`, app);
  expect(unpacked.status, unpacked.out).toBe(0);
  const fromOs = createRequire(join(root, 'packages/os/package.json'));
  const fromChecks = createRequire(join(root, 'packages/release-checks/package.json'));
  const dir = (req: NodeJS.Require, name: string) => dirname(req.resolve(`${name}/package.json`));
  for (const name of ['node-addon-api', 'node-gyp', 'node-gyp-build', 'prebuildify']) link(name, dir(fromOs, name));
  for (const name of ['vitest', 'typescript', '@types/node']) link(name, dir(fromChecks, name));
  const bins: Record<string, string> = {
    'node-gyp': '../node-gyp/bin/node-gyp.js',
    prebuildify: '../prebuildify/bin.js',
    tsc: '../typescript/bin/tsc',
    vitest: '../vitest/vitest.mjs',
    'tenferro-install-native': '../@tenferro/native/bin/tenferro-install-native.mjs',
    'tenferro-prebuild': '../@tenferro/native/bin/tenferro-prebuild.mjs',
  };
  mkdirSync(join(modules, '.bin'), { recursive: true });
  for (const [name, target] of Object.entries(bins)) {
    expect(existsSync(join(modules, '.bin', target)), `${name}'s bin ${target}`).toBe(true);
    symlinkSync(target, join(modules, '.bin', name));
  }
}

describe('docs/contracts/provider-author-guide.md, copied into an empty folder', () => {
  it('builds and passes the GEMM and linalg conformance kits', () => {
    const files = filesOf(guide);
    expect([...files.keys()].sort()).toEqual(
      [
        'native/binding.gyp',
        'native/src/abi.mjs',
        'native/src/addon.cc',
        'package.json',
        'src/gemm-provider.ts',
        'src/index.ts',
        'src/kernels/cholesky.ts',
        'src/kernels/gemm.ts',
        'src/linalg-kernels.ts',
        'src/native/binding.ts',
        'src/native/load.ts',
        'src/options.ts',
        'test/conformance.test.ts',
        'test/linalg.test.ts',
        'tsconfig.json',
      ].sort(),
    );
    // The check a third party tripped over (#40) is still the guide's.
    expect(files.get('src/gemm-provider.ts')).toContain('o.rowStride === 1 || o.colStride === 1');
    const app = join(work, 'tenferro-x-gemm');
    for (const [path, text] of files) {
      mkdirSync(dirname(join(app, path)), { recursive: true });
      writeFileSync(join(app, path), text);
    }
    nodeModules(app);

    // Step 4's command line, as the guide writes it.
    const line = guide.split('\n').find((l) => l.startsWith('npm run abi && '));
    expect(line).toBe('npm run abi && npm run build:native && npm test');
    const built = run(line!, app);
    expect(built.status, built.out).toBe(0);
    expect(existsSync(join(app, 'native/src/abi.generated.h'))).toBe(true);
    // 10 GEMM conformance cases and the linalg kit's 40, none skipped.
    expect(built.out).toMatch(/Tests\s+50 passed \(50\)/);

    // Step 5 (`npm pack`: prepack's tenferro-prebuild puts the prebuilt binary in the tarball) is
    // not repeated here: its files, package.json included, are examples/provider-template's byte for
    // byte (provider-template-guide.unit.test.ts), and provider-template.test.ts packs that template
    // and installs the tarball into an application with no toolchain. The guide gives the same command.
    expect(guide).toMatch(/^npm pack {2,}# runs prepack \(tsc, then tenferro-prebuild\)/m);
  }, 600_000);
});
