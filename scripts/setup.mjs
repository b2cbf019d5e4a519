#!/usr/bin/env node
// Brings a fresh checkout to a runnable state: pinned pnpm, Debian packages (as root),
// `pnpm install --frozen-lockfile`, native addons and TypeScript builds. Idempotent: each
// step checks before it acts, so a second run takes a few seconds.
// Downloads only from the npm registry and Debian's package archive.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '12.4.2';
/** Debian packages the workspace builds or tests against. */
const DEBIAN_PACKAGES = ['util-linux', 'pkg-config', 'libopenblas-dev', 'libblas-dev'];
const quiet = process.argv.includes('--quiet');

function log(message) {
  if (!quiet) console.log(`[setup] ${message}`);
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`[setup] failed: ${cmd} ${args.join(' ')} (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
}

function output(cmd, args) {
  try {
    return execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`[setup] tenferro needs Node.js >= 20; this is ${process.version}`);
  process.exit(1);
}

// 1. Debian packages (only as root; otherwise say exactly what to run).
if (process.platform === 'linux' && existsSync('/usr/bin/dpkg-query')) {
  const missing = DEBIAN_PACKAGES.filter(
    (p) => output('dpkg-query', ['-W', '-f=${Status}', p]) !== 'install ok installed',
  );
  if (missing.length > 0) {
    const isRoot = process.getuid?.() === 0;
    if (isRoot) {
      log(`installing Debian packages: ${missing.join(' ')}`);
      run('apt-get', ['update', '-qq']);
      run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    } else {
      console.warn(`[setup] missing Debian packages; run: sudo apt-get install -y ${missing.join(' ')}`);
    }
  }
}

// 2. The pinned pnpm (on PATH if it is the right version, else a private copy in .tools/).
let pnpm = 'pnpm';
if (output('pnpm', ['--version']) !== PNPM_VERSION) {
  pnpm = join(root, '.tools', 'node_modules', '.bin', 'pnpm');
  if (output(pnpm, ['--version']) !== PNPM_VERSION) {
    log(`installing pnpm@${PNPM_VERSION} into .tools/`);
    run('npm', ['install', '--prefix', join(root, '.tools'), '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `pnpm@${PNPM_VERSION}`]);
  }
  // turbo looks the package manager up on PATH.
  process.env.PATH = `${dirname(pnpm)}${delimiter}${process.env.PATH ?? ''}`;
}

// 3. Dependencies, when the lockfile or Node changed since the last install.
const stampFile = join(root, 'node_modules', '.tenferro-install-stamp');
const lock = readFileSync(join(root, 'pnpm-lock.yaml'));
const stamp = createHash('sha256').update(lock).update(process.version).digest('hex');
if (!existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== stamp) {
  log('pnpm install --frozen-lockfile');
  run(pnpm, ['install', '--frozen-lockfile', '--reporter=append-only'], {
    env: { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr' },
  });
  writeFileSync(stampFile, stamp);
}

// 4. Native addons and TypeScript, through turbo (cached; the Node ABI is part of the key).
log('building (turbo: build:native, build)');
run(pnpm, ['exec', 'turbo', 'run', 'build:native', 'build', '--output-logs=errors-only', '--log-prefix=none'], {
  env: {
    ...process.env,
    TURBO_TELEMETRY_DISABLED: '1',
    DO_NOT_TRACK: '1',
    npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
    TENFERRO_NODE_ABI: `${process.versions.modules}-${process.version}-${process.arch}`,
  },
});
writeFileSync(join(root, '.tenferro-setup.json'), JSON.stringify({ pnpm, path: process.env.PATH }, null, 2));
log('ready');
