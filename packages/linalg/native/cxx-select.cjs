'use strict';
// The C++ compiler of linalg's build, named by binding.gyp's make_global_settings through
// `node cxx-select.cjs --make-command` (which prints how to run this file; CXX in the environment
// when node-gyp runs wins over it). Eigen's templates make the kernel units most of every
// tenferro build's compile time, and clang++ compiles them in about half of g++'s CPU time. clang's
// code is as fast or faster for the f32 and complex kernels but 12-20 % slower for f64 svd (its
// Eigen GEMM micro-kernel; docs/performance.md, 2026-12-08), so when clang++ is installed it
// compiles the f32 and complex units and g++ everything else: the f64 units, the addon and the link.
// A sanitizer build (packages/native-build/asan.mjs, -O0) is compiled by clang++ whole — a third of
// g++'s CPU time on Eigen's templates at -O0 (25 against 72 CPU s) — and linked by g++, against
// g++'s ASan and UBSan runtimes, the ones the sanitizer tier preloads: clang 14's instrumentation
// calls the same runtime interface (ASan ABI v8), and reports through them were checked (a heap
// overflow, a use after free, a signed overflow, an out-of-range float-to-int cast, docs/
// performance.md, 2026-12-09). info().compilers names the compiler of each dtype's kernels.
const { spawnSync } = require('node:child_process');

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === '--make-command') {
  process.stdout.write(`${process.execPath} ${__filename}`);
  process.exit(0);
}

const sanitizer = args.some((a) => a.startsWith('-fsanitize='));
const compile = args.includes('-c');
const clangUnit = sanitizer ? compile : args.some((a) => /(^|\/)ops_(f32|c64|c128|c128_wide)\.cc$/.test(a));
// -ffp-contract=fast: fused multiply-adds where g++ forms them (its default for C++).
const run = (cmd, extra) => spawnSync(cmd, [...extra, ...args], { stdio: 'inherit' });
let result = clangUnit ? run('clang++', ['-ffp-contract=fast', '-Wno-unknown-warning-option']) : undefined;
if (result === undefined || result.error?.code === 'ENOENT') result = run('g++', []);
if (result.error) {
  process.stderr.write(`cxx-select.cjs: ${result.error.message}\n`);
  process.exit(1);
}
process.exit(result.status ?? 1);
