// Instruction-set dispatch of the kernels (decided once per process): binding.gyp compiles ops.h
// into tfl::generic (baseline x86-64 — SSE2 — or arm64), and on x86-64 the real types also into
// tfl::avx2 (AVX2 + FMA) and tfl::avx512 (AVX-512 F/DQ/BW/VL); this file, compiled for the baseline, picks
// the best set the CPU supports (__builtin_cpu_supports also checks that the OS saves the YMM/ZMM
// state), so that a prebuilt binary runs on any x86-64 and uses the vector units it finds.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "linalg.h"
#include "tenferro/isa.h"

namespace tfl {

// TFL_NO_GENERIC_REAL (binding.gyp's tenferro_portable=0: TENFERRO_NATIVE_ISA=best on a CPU with
// AVX2 or AVX-512, #39): the baseline f32/f64 units are not built — the library links only the
// baseline complex kernels, and a real job that would run on the baseline is refused (below).
namespace generic {
#if !defined(TFL_NO_GENERIC_REAL)
int run_f32(const Job& j);
int run_f64(const Job& j);
const char* compiler_f32();
const char* compiler_f64();
#endif
int run_c64(const Job& j);
int run_c128(const Job& j);
const char* compiler_c64();
const char* compiler_c128();
}  // namespace generic
// The real types only (binding.gyp): complex kernels run the baseline build on every CPU for now.
// TFL_HAVE_AVX2 / TFL_HAVE_AVX512: the libraries this build links (TENFERRO_NATIVE_ISA=host leaves
// AVX-512 out on a CPU without it, best leaves AVX2 out on one with it; a sanitizer build has neither).
#if defined(TFL_HAVE_AVX2)
namespace avx2 {
int run_f32(const Job& j);
int run_f64(const Job& j);
const char* compiler_f32();
const char* compiler_f64();
}  // namespace avx2
#endif
#if defined(TFL_HAVE_AVX512)
namespace avx512 {
int run_f32(const Job& j);
int run_f64(const Job& j);
const char* compiler_f32();
const char* compiler_f64();
}  // namespace avx512
#endif
#if defined(TFL_NO_GENERIC_REAL) && !defined(TFL_HAVE_AVX2) && !defined(TFL_HAVE_AVX512)
#error "TFL_NO_GENERIC_REAL needs a vector library of the real types (binding.gyp)"
#endif

namespace {

// The paths' ids are tenferro/isa.h's; TENFERRO_NO_AVX2 / TENFERRO_NO_AVX512 (binding.gyp) mark
// the libraries this build leaves out, as TFL_HAVE_* mark those it links.
static_assert(kIsaGeneric == static_cast<int>(tenferro::isa::kPortable) && kIsaAvx2 == static_cast<int>(tenferro::isa::kAvx2) &&
                  kIsaAvx512 == static_cast<int>(tenferro::isa::kAvx512) && static_cast<int>(kIsaCount) == static_cast<int>(tenferro::isa::kCount),
              "linalg's ISA ids are tenferro/isa.h's paths");

const char* const kIsaNames[kIsaCount] = {"generic", "avx2", "avx512"};

// A dtype's kernels on one path: the runner and the compiler of its translation unit (info().compilers).
struct Kernels {
  int (*run)(const Job&);
  const char* (*compiler)();
};

// A dtype this build (or, for the baseline's real types, this CPU's path) has no kernel for: its
// job — checked like any other by addon.cc — is refused with kBadDtype before any of its buffers is
// read or written (info().dtypesNotBuilt names such dtypes).
[[maybe_unused]] int dtype_not_built(const Job&) { return kBadDtype; }
[[maybe_unused]] const char* compiler_not_built() { return nullptr; }
#define TFL_NOT_BUILT {dtype_not_built, compiler_not_built}
#define TFL_KERNELS(ns, dtype) {ns::run_##dtype, ns::compiler_##dtype}

#if defined(TFL_F64_ONLY)
// binding.gyp's tenferro_linalg_f64_only=1 (the sanitizer build, #39) compiles the f64 kernels only.
#define TFL_ROW(f32, f64, c64, c128) {TFL_NOT_BUILT, f64, TFL_NOT_BUILT, TFL_NOT_BUILT}
#else
#define TFL_ROW(f32, f64, c64, c128) {f32, f64, c64, c128}
#endif
#if defined(TFL_NO_GENERIC_REAL)
#define TFL_GENERIC_REAL(dtype) TFL_NOT_BUILT
#else
#define TFL_GENERIC_REAL(dtype) TFL_KERNELS(generic, dtype)
#endif
#define TFL_GENERIC_ROW TFL_ROW(TFL_GENERIC_REAL(f32), TFL_GENERIC_REAL(f64), TFL_KERNELS(generic, c64), TFL_KERNELS(generic, c128))

// [isa][dtype]; a row whose path is not built is never chosen by isa() and holds the baseline's.
const Kernels kKernels[kIsaCount][4] = {
    TFL_GENERIC_ROW,
#if defined(TFL_HAVE_AVX2)
    TFL_ROW(TFL_KERNELS(avx2, f32), TFL_KERNELS(avx2, f64), TFL_KERNELS(generic, c64), TFL_KERNELS(generic, c128)),
#else
    TFL_GENERIC_ROW,
#endif
#if defined(TFL_HAVE_AVX512)
    TFL_ROW(TFL_KERNELS(avx512, f32), TFL_KERNELS(avx512, f64), TFL_KERNELS(generic, c64), TFL_KERNELS(generic, c128)),
#else
    TFL_GENERIC_ROW,
#endif
};
#undef TFL_NOT_BUILT
#undef TFL_KERNELS
#undef TFL_ROW
#undef TFL_GENERIC_REAL
#undef TFL_GENERIC_ROW

}  // namespace

Isa isa() {
  // TENFERRO_LINALG_ISA=generic|avx2 lowers (never raises) the set, for tests.
  static const Isa chosen = static_cast<Isa>(tenferro::isa::pick("TENFERRO_LINALG_ISA"));  // thread-safe static initialisation
  return chosen;
}

const char* not_built() {
  static char names[64];
  static const char* const list = [] {
    char paths[32];
    tenferro::isa::not_built(kIsaNames, paths, sizeof paths);
#if defined(TFL_NO_GENERIC_REAL)
    std::snprintf(names, sizeof names, "generic f32/f64%s%s", paths[0] != '\0' ? ", " : "", paths);
#else
    std::snprintf(names, sizeof names, "%s", paths);
#endif
    return names;
  }();
  return list;
}

// Whether this CPU runs a path this build left out that is faster than every built one it runs —
// or, without the baseline real kernels, none of the vector paths built in their place.
bool not_built_runs_here() {
#if defined(TFL_NO_GENERIC_REAL)
  if (!tenferro::isa::supported(tenferro::isa::kAvx2) && !tenferro::isa::supported(tenferro::isa::kAvx512)) return true;
#endif
  return tenferro::isa::any_runs_not_built();
}

const char* dtypes_not_built() {
#if defined(TFL_NO_GENERIC_REAL)
  // This process runs the baseline, whose real kernels this build left out.
  if (isa() == kIsaGeneric) {
#if defined(TFL_F64_ONLY)
    return "f32,f64,c64,c128";
#else
    return "f32,f64";
#endif
  }
#endif
#if defined(TFL_F64_ONLY)
  return "f32,c64,c128";
#else
  return nullptr;
#endif
}

const char* compilers() {
  static char text[256];
  static const char* const list = [] {
    static const char* const kNames[4] = {"f32", "f64", "c64", "c128"};
    size_t used = 0;
    text[0] = '\0';
    for (int d = 0; d < 4; ++d) {
      const char* c = kKernels[isa()][d].compiler();
      if (c == nullptr) continue;
      int len = static_cast<int>(std::strlen(c));
      while (len > 0 && c[len - 1] == ' ') --len;  // __clang_version__ ends with a space
      const int n = std::snprintf(text + used, sizeof text - used, "%s%s %.*s", used > 0 ? ", " : "", kNames[d], len, c);
      if (n < 0 || static_cast<size_t>(n) >= sizeof text - used) break;
      used += static_cast<size_t>(n);
    }
    return text;
  }();
  return list;
}

const char* isa_name(Isa i) { return i > kIsaGeneric && i < kIsaCount ? kIsaNames[i] : kIsaNames[kIsaGeneric]; }

int run(const Job& j) {
  if (j.dtype < kF32 || j.dtype > kC128) return kBadDtype;
  Isa i = isa();
#if defined(TFL_AVX512_SVD_EIG_ON_AVX2)
  // The AVX-512 units leave svd and eig out where the AVX2 ones are built (binding.gyp: a third of
  // those units' compile time); the AVX2 kernels run them on an AVX-512 CPU, within a few per cent.
  if (i == kIsaAvx512 && (j.op == kSvd || j.op == kEig)) i = kIsaAvx2;
#endif
  return kKernels[i][j.dtype].run(j);
}

}  // namespace tfl
