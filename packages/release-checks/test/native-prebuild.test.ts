// The release path, on every `npm test` (#40): each native package's prebuild folder is staged by
// @tenferro/native (what binding.gyp needs, read from it) and `node-gyp configure` runs in the staged
// copy — seconds each, and every `<!(…)` command runs — so an input the staging misses (as linalg's
// eigen-include.cjs was) fails here, not at release time. The full prebuild (prebuildify) is
// `pnpm pack` / `npm run release:dry`; os is packed with it in os-prebuilt-install.test.ts.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configureStaged, stagePrebuild } from '@tenferro/native/prebuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const packagesDir = join(root, 'packages');
const native = readdirSync(packagesDir).filter((d) => existsSync(join(packagesDir, d, 'native', 'binding.gyp')));
const setup = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8')) as { path: string };
const env: NodeJS.ProcessEnv = { ...process.env, PATH: setup.path };
// pnpm's bin shims (vitest's) set NODE_PATH to the workspace's package store; a package's own build has none.
delete env.NODE_PATH;

/** A staging folder of this run inside the package (its node_modules resolve from there), not native/build, which builds wipe. */
const stageDir = (dir: string) => join(packagesDir, dir, 'node_modules', '.cache', `tenferro-stage-check-${process.pid}`);

describe('staged prebuild folders configure', () => {
  it('every native package is checked', () => {
    expect(native.sort()).toEqual(['linalg', 'os', 'provider-blas', 'provider-faer', 'provider-tprims']);
  });

  it.each(native)('%s: node-gyp configure succeeds in the staged copy', (dir) => {
    const packageDir = join(packagesDir, dir);
    const workDir = stageDir(dir);
    try {
      const { inputs } = stagePrebuild({ packageDir, workDir });
      expect(inputs.entries).toContain('binding.gyp');
      const r = configureStaged({ packageDir, workDir, env });
      expect(r.ok, r.output.split('\n').filter((l) => !l.startsWith('gyp info')).slice(-20).join('\n')).toBe(true);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('fails when an input is missing from the staging: linalg without eigen-include.cjs', () => {
    const packageDir = join(packagesDir, 'linalg');
    const workDir = stageDir('linalg');
    try {
      stagePrebuild({ packageDir, workDir });
      rmSync(join(workDir, 'eigen-include.cjs'));
      const r = configureStaged({ packageDir, workDir, env });
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/eigen-include\.cjs/);
    } finally {
      rmSync(workDir, { recursive: true, force: true });
    }
  }, 60_000);
});
