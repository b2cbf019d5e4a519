'use strict';
// The C++ compiler of linalg's build, named by binding.gyp's make_global_settings through
// `node cxx-select.cjs --make-command` (which prints how to run this file; CXX in the environment
// when node-gyp runs wins over it). Eigen's templates make the kernel units most of every
// tenferro build's compile time, and clang++ compiles them in about half of g++'s CPU time. clang's
// code is as fast or faster for the f32 and complex kernels but 12-20 % slower for f64 svd (its
// Eigen GEMM micro-kernel; docs/performance.md, 2026-12-08), so when clang++ is installed it
// compiles the f32 and complex units and g++ everything else: the f64 units, the addon, the link,
// and every sanitizer build (g++'s ASan runtime is the one the sanitizer tier preloads).
// info().compilers names the compiler of each dtype's kernels.
const { spawnSync } = require('node:child_process');

const args = process.argv.slice(2);
if (args.length === 1 && args[0] === '--make-command') {
  process.stdout.write(`${process.execPath} ${__filename}`);
  process.exit(0);
}

const sanitizer = args.some((a) => a.startsWith('-fsanitize='));
const clangUnit = !sanitizer && args.some((a) => /(^|\/)ops_(f32|c64|c128|c128_wide)\.cc$/.test(a));
// -ffp-contract=fast: fused multiply-adds where g++ forms them (its default for C++).
const run = (cmd, extra) => spawnSync(cmd, [...extra, ...args], { stdio: 'inherit' });
let result = clangUnit ? run('clang++', ['-ffp-contract=fast', '-Wno-unknown-warning-option']) : undefined;
if (result === undefined || result.error?.code === 'ENOENT') result = run('g++', []);
if (result.error) {
  process.stderr.write(`cxx-select.cjs: ${result.error.message}\n`);
  process.exit(1);
}
process.exit(result.status ?? 1);
