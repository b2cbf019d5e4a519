#!/usr/bin/env node
// The ONE BLAS detection of @tenferro/provider-blas. The addon links NO BLAS (native/binding.gyp
// lists none: the runtime is dlopen()ed at run time, src/native/candidates.ts), so this only
// decides whether a CBLAS is installed at all and what to say when none is. Used two ways:
//   - by scripts/build-native.mjs, which skips the build and records why in
//     native/build/status.json when nothing is found (`--json` prints the whole result);
//   - at run time by src/native/load.ts, to explain a missing addon.
//
// Order (the first that is complete wins; the system's choice first, as at run time, #42):
//   1. explicit overrides: TENFERRO_IGNORE_SYSTEM_BLAS=1 (pretend there is no BLAS: the package
//      installs without its addon), TENFERRO_BLAS_PKGCONFIG=<pkg-config name> (only that one);
//   2. pkg-config `blas` (Debian's update-alternatives entry, so the run-time library can be
//      swapped: OpenBLAS, reference, BLIS, MKL ... all provide libblas.so.3 with CBLAS inside);
//   3. pkg-config `openblas`;
//   4. MKL: pkg-config mkl-dynamic-lp64-seq, -iomp, -gomp (GNU OpenMP), then $MKLROOT; header
//      mkl_cblas.h (only libmkl-dev ships these; the run time needs libmkl-rt alone);
//   5. BLIS (pkg-config `blis`, else Debian's libblis-dev layout, which ships no .pc file).
// Every candidate must have its header (cblas.h / mkl_cblas.h declaring cblas_dgemm) on disk.
// `-lcblas` is never used: Debian has no libcblas.so (CBLAS lives inside libblas.so.3).
//
// Decisions are logged with util.debuglog('tenferro') (NODE_DEBUG=tenferro), on stderr, each
// line starting with `tenferro:`.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { debuglog } from 'node:util';

const debug = debuglog('tenferro');

/** The line a Debian user runs to get a working BLAS (it is in every "not found" report). */
export const APT_INSTALL_LINE = 'apt-get install -y libopenblas-dev pkg-config';

const SYSTEM_INCLUDE_DIRS = ['/usr/include/x86_64-linux-gnu', '/usr/include', '/usr/local/include'];

function log(message) {
  debug(`tenferro: blas detection: ${message}`);
}

/** `pkg-config <args> <pkg>` split into flags, or undefined when pkg-config or the package is missing. */
function pkgConfig(args, pkg, env) {
  try {
    const out = execFileSync('pkg-config', [...args, pkg], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
    return out.trim().split(/\s+/).filter(Boolean);
  } catch (error) {
    if (error && error.code === 'ENOENT') return { noPkgConfig: true };
    return undefined;
  }
}

function headerIn(dirs, header) {
  for (const dir of dirs) {
    const path = join(dir, header);
    if (!existsSync(path)) continue;
    try {
      if (readFileSync(path, 'utf8').includes('cblas_dgemm')) return path;
      log(`${path} exists but does not declare cblas_dgemm`);
    } catch {
      // unreadable: keep looking
    }
  }
  return undefined;
}

/**
 * Try one pkg-config package. Returns a found result, or a string saying why not.
 * @returns {object | string}
 */
function fromPkgConfig(pkg, vendor, header, env, defines = []) {
  const cflags = pkgConfig(['--cflags'], pkg, env);
  if (cflags && cflags.noPkgConfig) return 'pkg-config is not installed';
  if (cflags === undefined) return `pkg-config has no package '${pkg}'`;
  const libs = pkgConfig(['--libs'], pkg, env);
  if (libs === undefined || libs.noPkgConfig) return `pkg-config --libs ${pkg} failed`;
  const includeDirs = cflags.filter((f) => f.startsWith('-I')).map((f) => f.slice(2));
  const otherCflags = cflags.filter((f) => !f.startsWith('-I'));
  const headerPath = headerIn([...includeDirs, ...SYSTEM_INCLUDE_DIRS], header);
  if (headerPath === undefined) return `pkg-config '${pkg}' found but ${header} (declaring cblas_dgemm) is not in ${[...includeDirs, ...SYSTEM_INCLUDE_DIRS].join(', ')}`;
  if (libs.includes('-lcblas')) return `pkg-config '${pkg}' asks for -lcblas, which tenferro never links (Debian has no libcblas.so)`;
  return {
    found: true,
    vendor,
    source: `pkg-config ${pkg}`,
    header,
    headerPath,
    includeDirs: [...new Set([...includeDirs, dirnameOf(headerPath)])],
    cflags: otherCflags,
    libs,
    defines,
  };
}

function dirnameOf(path) {
  return path.slice(0, path.lastIndexOf('/')) || '/';
}

function fromMklRoot(env) {
  const root = env.MKLROOT;
  if (!root) return 'MKLROOT is not set';
  const headerPath = headerIn([join(root, 'include'), join(root, 'include', 'mkl')], 'mkl_cblas.h');
  if (headerPath === undefined) return `MKLROOT=${root} has no include/mkl_cblas.h`;
  const libDir = [join(root, 'lib', 'intel64'), join(root, 'lib')].find((d) => existsSync(join(d, 'libmkl_rt.so')));
  if (libDir === undefined) return `MKLROOT=${root} has no lib/intel64/libmkl_rt.so`;
  return {
    found: true,
    vendor: 'mkl',
    source: `MKLROOT=${root}`,
    header: 'mkl_cblas.h',
    headerPath,
    includeDirs: [dirnameOf(headerPath)],
    cflags: [],
    libs: [`-L${libDir}`, `-Wl,-rpath,${libDir}`, '-lmkl_rt'],
    defines: ['TENFERRO_BLAS_MKL=1'],
  };
}

function fromBlisLayout() {
  // Debian's libblis-dev: /usr/include/x86_64-linux-gnu/blis/cblas.h and libblis.so, no .pc file.
  const headerPath = headerIn(['/usr/include/x86_64-linux-gnu/blis', '/usr/include/blis', '/usr/local/include/blis'], 'cblas.h');
  if (headerPath === undefined) return 'no BLIS cblas.h in /usr/include/x86_64-linux-gnu/blis, /usr/include/blis or /usr/local/include/blis';
  const libDirs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib', '/usr/local/lib'];
  const libDir = libDirs.find((d) => existsSync(join(d, 'libblis.so')));
  if (libDir === undefined) return `found ${headerPath} but no libblis.so in ${libDirs.join(', ')}`;
  return {
    found: true,
    vendor: 'blis',
    source: 'BLIS (Debian libblis-dev layout)',
    header: 'cblas.h',
    headerPath,
    includeDirs: [dirnameOf(headerPath)],
    cflags: [],
    libs: [`-L${libDir}`, '-lblis'],
    defines: [],
  };
}

/**
 * Detect the system CBLAS.
 * @param {{ env?: NodeJS.ProcessEnv }} [options]
 */
export function detectBlas(options = {}) {
  const env = options.env ?? process.env;
  const tried = [];
  const attempt = (candidate, result) => {
    if (typeof result === 'string') {
      tried.push({ candidate, reason: result });
      log(`${candidate}: no (${result})`);
      return undefined;
    }
    log(`${candidate}: yes (header ${result.headerPath}, libs ${result.libs.join(' ')})`);
    return { ...result, tried };
  };

  if (env.TENFERRO_IGNORE_SYSTEM_BLAS === '1') {
    tried.push({ candidate: 'TENFERRO_IGNORE_SYSTEM_BLAS', reason: 'TENFERRO_IGNORE_SYSTEM_BLAS=1: the system BLAS is ignored on purpose' });
    log('TENFERRO_IGNORE_SYSTEM_BLAS=1: not looking for a BLAS');
    return notFound(tried, env);
  }

  const override = env.TENFERRO_BLAS_PKGCONFIG;
  if (override) {
    const vendor = /mkl/i.test(override) ? 'mkl' : /openblas/i.test(override) ? 'openblas' : /blis/i.test(override) ? 'blis' : 'blas';
    const header = vendor === 'mkl' ? 'mkl_cblas.h' : 'cblas.h';
    const found = attempt(`TENFERRO_BLAS_PKGCONFIG=${override}`, fromPkgConfig(override, vendor, header, env, vendor === 'mkl' ? ['TENFERRO_BLAS_MKL=1'] : []));
    return found ?? notFound(tried, env);
  }

  const candidates = [
    ['pkg-config blas', () => fromPkgConfig('blas', 'blas', 'cblas.h', env)],
    ['pkg-config openblas', () => fromPkgConfig('openblas', 'openblas', 'cblas.h', env)],
    ['pkg-config mkl-dynamic-lp64-seq', () => fromPkgConfig('mkl-dynamic-lp64-seq', 'mkl', 'mkl_cblas.h', env, ['TENFERRO_BLAS_MKL=1'])],
    ['pkg-config mkl-dynamic-lp64-iomp', () => fromPkgConfig('mkl-dynamic-lp64-iomp', 'mkl', 'mkl_cblas.h', env, ['TENFERRO_BLAS_MKL=1'])],
    ['pkg-config mkl-dynamic-lp64-gomp', () => fromPkgConfig('mkl-dynamic-lp64-gomp', 'mkl', 'mkl_cblas.h', env, ['TENFERRO_BLAS_MKL=1'])],
    ['MKLROOT', () => fromMklRoot(env)],
    ['pkg-config blis', () => fromPkgConfig('blis', 'blis', 'cblas.h', env)],
    ['BLIS', () => fromBlisLayout()],
  ];
  for (const [name, run] of candidates) {
    const found = attempt(name, run());
    if (found) return found;
  }
  return notFound(tried, env);
}

function notFound(tried, env) {
  const ignored = env.TENFERRO_IGNORE_SYSTEM_BLAS === '1';
  const reasons = tried.map((t) => `${t.candidate}: ${t.reason}`);
  const possibleSolutions = ignored
    ? [
        'unset TENFERRO_IGNORE_SYSTEM_BLAS and rebuild: npm rebuild @tenferro/provider-blas (in a clone of the tenferro repository: npx pnpm@12.4.2 --filter @tenferro/provider-blas run build:native)',
        `if no BLAS is installed (Debian/Ubuntu, as root): ${APT_INSTALL_LINE}`,
      ]
    : [
        `install OpenBLAS and pkg-config (Debian/Ubuntu, as root): ${APT_INSTALL_LINE}`,
        'or point TENFERRO_BLAS_PKGCONFIG at the pkg-config name of another CBLAS (e.g. mkl-dynamic-lp64-seq, blas-netlib), or set MKLROOT',
        'then rebuild the addon: npm rebuild @tenferro/provider-blas (in a clone of the tenferro repository: npx pnpm@12.4.2 --filter @tenferro/provider-blas run build:native)',
      ];
  log(`no BLAS found (${reasons.join('; ')})`);
  return { found: false, tried, reasons, possibleSolutions };
}

// --- command line (build-native.mjs, and by hand) --------------------------------------------
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const flag = process.argv[2] ?? '--json';
  const result = detectBlas();
  const lines = (values) => process.stdout.write(values.length > 0 ? `${values.join('\n')}\n` : '');
  switch (flag) {
    case '--json':
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      break;
    case '--found':
      process.stdout.write(result.found ? '1\n' : '0\n');
      break;
    case '--include-dirs':
      lines(result.found ? result.includeDirs : []);
      break;
    case '--cflags':
      lines(result.found ? [...result.includeDirs.map((d) => `-I${d}`), ...result.cflags] : []);
      break;
    case '--defines':
      lines(result.found ? result.defines : []);
      break;
    case '--libs':
      lines(result.found ? result.libs : []);
      break;
    default:
      process.stderr.write(`usage: detect-blas.mjs [--json|--found|--include-dirs|--cflags|--defines|--libs]\n`);
      process.exit(2);
  }
}
