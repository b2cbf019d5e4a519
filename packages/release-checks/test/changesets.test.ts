// A core minor never forces the providers to a major. The providers' peer range on core is
// bounded below the next major (">=0.1.0 <1.0.0") and .changeset/config.json has
// onlyUpdatePeerDependentsWhenOutOfRange, so changesets bumps a peer dependent only when core
// leaves that range. Checked by running `changeset version` in a throwaway copy of the workspace
// (the manifests, the changeset config and the pending changesets), as a release would.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const changesetBin = join(root, 'node_modules', '@changesets', 'cli', 'bin.js');
const PROVIDERS = ['provider-faer', 'provider-blas', 'provider-tprims'];
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A copy of the workspace's manifests and changesets; `pending: false` drops the pending changesets. */
function throwawayWorkspace(pending: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenferro-changesets-'));
  dirs.push(dir);
  for (const f of ['package.json', 'pnpm-workspace.yaml']) cpSync(join(root, f), join(dir, f));
  mkdirSync(join(dir, '.changeset'));
  for (const f of readdirSync(join(root, '.changeset'))) {
    if (f === 'config.json' || (pending && f.endsWith('.md') && f !== 'README.md')) cpSync(join(root, '.changeset', f), join(dir, '.changeset', f));
  }
  for (const p of readdirSync(join(root, 'packages'))) {
    if (!existsSync(join(root, 'packages', p, 'package.json'))) continue;
    mkdirSync(join(dir, 'packages', p), { recursive: true });
    cpSync(join(root, 'packages', p, 'package.json'), join(dir, 'packages', p, 'package.json'));
  }
  // changesets looks for the repository root; a bare git repository is enough (nothing is committed).
  spawnSync('git', ['init', '-q'], { cwd: dir });
  return dir;
}

function version(dir: string): Record<string, string> {
  const r = spawnSync(process.execPath, [changesetBin, 'version'], { cwd: dir, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (r.status !== 0) throw new Error(`changeset version failed:\n${r.stdout}${r.stderr}`);
  const versions: Record<string, string> = {};
  for (const p of readdirSync(join(dir, 'packages'))) {
    const pkg = JSON.parse(readFileSync(join(dir, 'packages', p, 'package.json'), 'utf8')) as { name: string; version: string };
    versions[p] = pkg.version;
  }
  return versions;
}

const current = (p: string) => (JSON.parse(readFileSync(join(root, 'packages', p, 'package.json'), 'utf8')) as { version: string }).version;
const major = (v: string) => Number(v.split('.')[0]);

describe('changeset version with a core minor', () => {
  it('alone: core goes up a minor, no provider is bumped', () => {
    const dir = throwawayWorkspace(false);
    writeFileSync(join(dir, '.changeset', 'core-minor-check.md'), '---\n"@tenferro/core": minor\n---\n\na core minor\n');
    const v = version(dir);
    const [cMajor, cMinor] = current('core').split('.').map(Number);
    expect(v.core).toBe(cMajor === 0 ? `0.${cMinor! + 1}.0` : `${cMajor}.${cMinor! + 1}.0`);
    for (const p of PROVIDERS) expect(v[p], p).toBe(current(p));
  });

  it('with every pending changeset: no provider goes to a major', () => {
    const dir = throwawayWorkspace(true);
    writeFileSync(join(dir, '.changeset', 'core-minor-check.md'), '---\n"@tenferro/core": minor\n---\n\na core minor\n');
    const v = version(dir);
    for (const p of PROVIDERS) {
      expect(major(v[p]!), `${p} ${current(p)} → ${v[p]}`).toBe(major(current(p)));
      // The peer range still admits the new core.
      const peer = (JSON.parse(readFileSync(join(dir, 'packages', p, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }).peerDependencies['@tenferro/core'];
      expect(peer).toMatch(/^>=\d+\.\d+\.\d+ <\d+\.0\.0$/);
      expect(major(v.core!)).toBeLessThan(Number(peer!.split('<')[1]!.split('.')[0]));
    }
  });
});
