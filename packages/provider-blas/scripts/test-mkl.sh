#!/bin/sh
# Optional (not in default CI): test the provider against Intel MKL from Debian's non-free
# component (intel-mkl 2020.4 on bookworm). Needs root and network access to deb.debian.org.
#
#   1. adds bookworm `non-free` to the apt sources (a separate file, removed again afterwards);
#   2. preseeds debconf so MKL does NOT become the system libblas.so.3 (the question
#      libmkl-rt/use-as-default-blas-lapack is answered false: OpenBLAS stays the default);
#   3. installs libmkl-dev (headers, mkl-dynamic-lp64-*.pc, libmkl_rt.so ...);
#   4. builds the addon against MKL in a scratch copy of the package (the package's own
#      native/build stays on the system BLAS), via TENFERRO_BLAS_PKGCONFIG=mkl-dynamic-lp64-seq
#      (then -gomp, the GNU OpenMP layer, and -iomp when libiomp5 is available), and runs the test suite on each build with
#      TENFERRO_BLAS_ADDON pointing at it and TENFERRO_BLAS_EXPECT=mkl;
#   5. removes exactly the packages it installed and the apt source, unless TENFERRO_KEEP_MKL=1
#      (with MKL installed, the default build would pick MKL first: detection prefers it).
# Extra arguments go to vitest.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "test-mkl: needs root (apt-get); run: sudo sh scripts/test-mkl.sh" >&2
  exit 2
fi
source_file=/etc/apt/sources.list.d/tenferro-mkl-non-free.sources
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
tmp=$(mktemp -d)
installed_new=""

cleanup() {
  status=$?
  if [ "${TENFERRO_KEEP_MKL:-0}" != 1 ]; then
    if [ -n "$installed_new" ]; then
      echo "test-mkl: removing what it installed: $installed_new"
      # shellcheck disable=SC2086
      DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $installed_new >/dev/null || true
    fi
    rm -f "$source_file"
    apt-get update -qq >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
  exit $status
}
trap cleanup EXIT INT TERM

echo "test-mkl: enabling $codename non-free"
cat > "$source_file" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: $codename
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
apt-get update -qq

echo "libmkl-rt libmkl-rt/use-as-default-blas-lapack boolean false" | debconf-set-selections

installed() { dpkg-query -W -f='${db:Status-Status} ${Package}\n' | awk '$1 == "installed" { print $2 }' | sort; }
installed >"$tmp/before"
echo "test-mkl: apt-get install libmkl-dev (large download)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libmkl-dev pkg-config >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libiomp-dev >/dev/null 2>&1 || echo "test-mkl: libiomp-dev not available: testing the sequential layer only"
installed >"$tmp/after"
installed_new=$(comm -13 "$tmp/before" "$tmp/after" | tr '\n' ' ')

# A scratch copy of the package that shares its node_modules (node-gyp, node-addon-api, core).
mkdir -p "$tmp/pkg/native"
cp -r "$here/native/binding.gyp" "$here/native/src" "$tmp/pkg/native/"
cp -r "$here/scripts" "$here/package.json" "$tmp/pkg/"
ln -s "$here/node_modules" "$tmp/pkg/node_modules"

failed=0
for layer in seq gomp iomp; do
  pc=mkl-dynamic-lp64-$layer
  if ! pkg-config --exists "$pc"; then echo "test-mkl: pkg-config has no $pc: skipped"; continue; fi
  if [ "$layer" = iomp ] && ! ldconfig -p | grep -q libiomp5; then echo "test-mkl: no libiomp5: $pc skipped"; continue; fi
  echo "test-mkl: building against $pc"
  rm -rf "$tmp/pkg/native/build"
  TENFERRO_BLAS_PKGCONFIG=$pc TENFERRO_REQUIRE_NATIVE=1 node "$tmp/pkg/scripts/build-native.mjs" >"$tmp/build-$layer.log" 2>&1 || { cat "$tmp/build-$layer.log"; failed=1; continue; }
  cp "$tmp/pkg/native/build/Release/tenferro_blas.node" "$tmp/tenferro_blas-$layer.node"
  echo "test-mkl: tests on $pc"
  (cd "$here" && TENFERRO_BLAS_ADDON="$tmp/tenferro_blas-$layer.node" TENFERRO_BLAS_EXPECT=mkl npx vitest run "$@") || failed=1
  (cd "$here" && TENFERRO_BLAS_ADDON="$tmp/tenferro_blas-$layer.node" node -e "import('./dist/index.js').then((m) => { const s = m.blasProviderStatus(); console.log('test-mkl: ' + (s.available ? s.name + ' | ' + JSON.stringify(s.capabilities) : JSON.stringify(s))); })") || failed=1
done
exit $failed
