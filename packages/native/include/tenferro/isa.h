// tenferro/isa.h — the instruction-set paths of a native tenferro package (#40): which paths this
// CPU runs, which this build compiled in, which one to run (the best supported, lowered — never
// raised — by the package's override variable), and what a build left out. Header-only, C++17.
//
// Paths, slowest first: kPortable (baseline x86-64 or arm64), kAvx2 (AVX2 + FMA), kAvx512
// (AVX-512 F/DQ/BW/VL). A build leaves a path out with -DTENFERRO_NO_AVX2 / -DTENFERRO_NO_AVX512
// (binding.gyp; TENFERRO_NATIVE_ISA=host on a CPU without AVX-512, best on one with it, a
// sanitizer build). __builtin_cpu_supports also checks that the OS saves the YMM/ZMM state.
#ifndef TENFERRO_ISA_H_
#define TENFERRO_ISA_H_

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tenferro {
namespace isa {

enum Path : int { kPortable = 0, kAvx2 = 1, kAvx512 = 2, kCount = 3 };

// Whether this CPU (and OS) runs `path`; decided once per process. (TENFERRO_ISA_TEST_CPU=<n>, a
// compile-time test seam, stands for a CPU that runs paths 0..n.)
inline bool runs_here(Path path) {
#if defined(TENFERRO_ISA_TEST_CPU)
  return path >= kPortable && path <= TENFERRO_ISA_TEST_CPU;
#elif defined(__x86_64__) || defined(__i386__)
  static const bool avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                             __builtin_cpu_supports("avx512bw");
  switch (path) {
    case kPortable: return true;
    case kAvx2: return avx2;
    case kAvx512: return avx512;
    default: return false;
  }
#else
  return path == kPortable;
#endif
}

// Whether this build compiled `path` in.
inline bool built(Path path) {
#if defined(TENFERRO_NO_AVX512)
  if (path == kAvx512) return false;
#endif
#if defined(TENFERRO_NO_AVX2)
  if (path == kAvx2) return false;
#endif
  return path >= kPortable && path < kCount;
}

inline bool supported(Path path) { return built(path) && runs_here(path); }

// The path to run: the best supported one, lowered by the environment variable `override_env`
// (portable|scalar|generic, avx2, avx512|avx512f; anything else is ignored) — never raised; a
// lowered path this build left out gives the next supported one below it. Callers keep the result
// (e.g. in a function-local static): the variable is read at each call.
inline Path pick(const char* override_env) {
  Path best = supported(kAvx512) ? kAvx512 : supported(kAvx2) ? kAvx2 : kPortable;
  const char* env = override_env == nullptr ? nullptr : std::getenv(override_env);
  if (env != nullptr) {
    Path want = best;
    if (std::strcmp(env, "portable") == 0 || std::strcmp(env, "scalar") == 0 || std::strcmp(env, "generic") == 0) want = kPortable;
    else if (std::strcmp(env, "avx2") == 0) want = kAvx2;
    else if (std::strcmp(env, "avx512") == 0 || std::strcmp(env, "avx512f") == 0) want = kAvx512;
    if (want < best) best = want;
    while (best > kPortable && !supported(best)) best = static_cast<Path>(best - 1);
  }
  return best;
}

// Whether this build left `path` out although this CPU runs it and no faster built path runs here
// (the kernels then run slower than they could: TENFERRO_NATIVE_ISA=best leaves AVX2 out on an
// AVX-512 CPU, which runs the faster AVX-512 path — not reported, #39).
inline bool runs_not_built(Path path) {
  if (built(path) || !runs_here(path)) return false;
  for (int k = path + 1; k < kCount; ++k) {
    if (supported(static_cast<Path>(k))) return false;
  }
  return true;
}

// Whether any path this build left out runs here faster than every built one (see runs_not_built).
inline bool any_runs_not_built() {
  for (int i = 0; i < kCount; ++i) {
    if (runs_not_built(static_cast<Path>(i))) return true;
  }
  return false;
}

// The paths this build left out, as `names[path]` joined with ", " into `out` (size `n`), slowest
// first; "" for a full build. Only x86-64 has paths to leave out.
inline const char* not_built(const char* const names[kCount], char* out, std::size_t n) {
  std::size_t at = 0;
  if (n == 0) return out;
  out[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
  for (int i = 0; i < kCount; ++i) {
    if (built(static_cast<Path>(i))) continue;
    const int wrote = std::snprintf(out + at, n - at, "%s%s", at == 0 ? "" : ", ", names[i]);
    if (wrote < 0 || static_cast<std::size_t>(wrote) >= n - at) break;
    at += static_cast<std::size_t>(wrote);
  }
#else
  (void)names;
#endif
  return out;
}

}  // namespace isa
}  // namespace tenferro

#endif  // TENFERRO_ISA_H_
