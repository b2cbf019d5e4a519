#!/bin/sh
# The C++ compiler of linalg's build (binding.gyp's make_global_settings; CXX in the environment
# when node-gyp runs wins over it). Eigen's templates make the kernel units most of every
# tenferro build's compile time, and clang++ compiles them in about half of g++'s CPU time
# (docs/performance.md, 2026-12-08). clang's code is faster or equal for the f32 and complex kernels
# but 10-20 % slower for f64 svd (its Eigen GEMM kernel), so when clang++ is installed it compiles
# the f32 and complex units and g++ everything else: the f64 kernels, the addon, the link, and every
# sanitizer build (g++'s ASan runtime is the one the sanitizer tier preloads).
# info().compilers names the compiler of each dtype's kernels.
for arg in "$@"; do
  case $arg in
    -fsanitize=*) exec g++ "$@" ;;
  esac
done
for arg in "$@"; do
  case $arg in
    *ops_f32.cc | *ops_c64.cc | *ops_c128.cc | *ops_c128_wide.cc)
      # -ffp-contract=fast: fused multiply-adds where g++ forms them (its default for C++).
      if command -v clang++ >/dev/null 2>&1; then exec clang++ -ffp-contract=fast -Wno-unknown-warning-option "$@"; fi
      ;;
  esac
done
exec g++ "$@"
