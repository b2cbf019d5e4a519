#!/bin/sh
# Runs the provider's tests against the reference (netlib) BLAS instead of the system default
# (OpenBLAS on Debian with libopenblas-dev): the addon links libblas.so.3 (the Debian
# alternative), so putting the reference libblas.so.3 first on LD_LIBRARY_PATH swaps the runtime
# for this process tree (vitest's forks and tenferro's engine workers inherit it).
# Needs Debian's libblas3 (libblas-dev). Extra arguments go to vitest.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${TENFERRO_REFERENCE_BLAS_DIR:-/usr/lib/x86_64-linux-gnu/blas}
if [ ! -e "$dir/libblas.so.3" ]; then
  echo "test-reference-blas: $dir/libblas.so.3 not found (apt-get install -y libblas-dev)" >&2
  exit 3
fi
cd "$here"
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TENFERRO_BLAS_EXPECT=reference exec npx vitest run "$@"
