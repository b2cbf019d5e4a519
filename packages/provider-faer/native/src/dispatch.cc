// ISA dispatch (decided once per process), cache discovery (sysfs, once), cache blocking, and
// the per-thread packing scratch.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "faer_gemm.h"

namespace faer {

double now_seconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// ---------------------------------------------------------------------------------------------
// Per-thread scratch: each engine worker (a thread) owns its buffers (kScratchSlots of them),
// grown to the largest size it has needed and reused; freed when the thread exits.
namespace {
struct Scratch {
  void* ptr[kScratchSlots] = {};
  std::size_t size[kScratchSlots] = {};
  ~Scratch() {
    for (void* p : ptr) std::free(p);
  }
};
thread_local Scratch tls_scratch;
}  // namespace

void* scratch(int slot, std::size_t bytes) {
  Scratch& s = tls_scratch;
  if (bytes == 0) bytes = 64;
  if (s.size[slot] >= bytes) return s.ptr[slot];
  std::free(s.ptr[slot]);
  // Round up to a multiple of 64 (aligned_alloc's requirement) plus one line of slack.
  const std::size_t rounded = (bytes + 127) / 64 * 64;
  s.ptr[slot] = std::aligned_alloc(64, rounded);
  s.size[slot] = s.ptr[slot] != nullptr ? rounded : 0;
  return s.ptr[slot];
}

// ---------------------------------------------------------------------------------------------
// Cache sizes from /sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}.
namespace {
bool read_line(const char* path, char* buf, std::size_t n) {
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  const bool ok = std::fgets(buf, static_cast<int>(n), f) != nullptr;
  std::fclose(f);
  return ok;
}

idx parse_size(const char* s) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (end == s || v <= 0) return 0;
  if (*end == 'K' || *end == 'k') return static_cast<idx>(v) * 1024;
  if (*end == 'M' || *end == 'm') return static_cast<idx>(v) * 1024 * 1024;
  if (*end == 'G' || *end == 'g') return static_cast<idx>(v) * 1024 * 1024 * 1024;
  return static_cast<idx>(v);
}

CacheInfo discover_caches() {
  CacheInfo c{32 * 1024, 1024 * 1024, 8 * 1024 * 1024, false};
  bool any = false;
  for (int i = 0; i < 16; ++i) {
    char path[128], level[32], type[32], size[32];
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    if (!read_line(path, level, sizeof level)) break;
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if (!read_line(path, type, sizeof type)) continue;
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!read_line(path, size, sizeof size)) continue;
    if (std::strncmp(type, "Instruction", 11) == 0) continue;
    const idx bytes = parse_size(size);
    if (bytes <= 0) continue;
    const int lv = std::atoi(level);
    if (lv == 1) c.l1d = bytes;
    else if (lv == 2) c.l2 = bytes;
    else if (lv == 3) c.l3 = bytes;
    else continue;
    any = true;
  }
  c.from_sysfs = any;
  return c;
}
}  // namespace

const CacheInfo& cache_info() {
  static const CacheInfo info = discover_caches();
  return info;
}

// ---------------------------------------------------------------------------------------------
Isa best_isa() {
  // TENFERRO_FAER_ISA=portable|avx2|avx512f lowers (never raises) the path, for tests and profiling.
  static const Isa isa = tenferro::isa::pick("TENFERRO_FAER_ISA");
  return isa;
}

const IsaEngine& engine(Isa isa) {
  switch (isa) {
#if !defined(TENFERRO_NO_AVX512)
    case kIsaAvx512: return kEngineAvx512;
#endif
#if !defined(TENFERRO_NO_AVX2)
    case kIsaAvx2: return kEngineAvx2;
#endif
    default: return kEngineScalar;
  }
}

// ---------------------------------------------------------------------------------------------
// Blocking (in real elements):
//   KC: the B micro-panel (KC x NR) takes about half of L1d;
//   MC: the packed A block (MC x KC) about half of L2;
//   NC: the packed B block (KC x NC) about a quarter of L3 (shared).
// TENFERRO_FAER_BLOCKING_F64 / _F32 = "mc,kc,nc", TENFERRO_FAER_SMALL and
// TENFERRO_FAER_SMALL_STREAM_BYTES override (tuning).
namespace {
idx round_down(idx v, idx m) { return v / m * m; }
idx clampi(idx v, idx lo, idx hi) { return v < lo ? lo : v > hi ? hi : v; }

// Unpacked-path thresholds on m*n*k, chosen by measurement (bench/tune-small.mjs, bench/small-vs-c.mjs;
// README): the real small-matrix kernel (register tiles straight from a column-major A) beats the
// packed engine for f32 and f64 up to n = 256 (the operands still sit in L2; packing costs a pass
// over A and B it never earns back); the complex one (vector ISAs) up to about n = 64, where the
// packed 1M engine catches up (c128 48: 84 vs 83 GF/s; 96: 88 vs 95).
constexpr double kSmallDefault = 256.0 * 256 * 256;
constexpr double kSmallComplexDefault = 64.0 * 64 * 64;

Blocking compute_blocking(Isa isa, int bytes) {
  const CacheInfo& c = cache_info();
  const KernelShape s = bytes == 4 ? engine(isa).f32 : engine(isa).f64;
  Blocking b;
  b.kc = clampi(round_down(c.l1d / 2 / (s.nr * bytes), 16), 64, 1024);
  b.mc = clampi(round_down(c.l2 / 2 / (b.kc * bytes), s.mr), s.mr, 4096);
  b.nc = clampi(round_down(c.l3 / 4 / (b.kc * bytes), s.nr), s.nr, 16 * 1024);
  b.small = kSmallDefault;
  b.small_complex = kSmallComplexDefault;
  b.small_stream_bytes = static_cast<double>(c.l2) / 4;
  const char* env = std::getenv(bytes == 4 ? "TENFERRO_FAER_BLOCKING_F32" : "TENFERRO_FAER_BLOCKING_F64");
  if (env != nullptr) {
    long long mc = 0, kc = 0, nc = 0;
    if (std::sscanf(env, "%lld,%lld,%lld", &mc, &kc, &nc) == 3 && mc > 0 && kc > 0 && nc > 0) {
      b.mc = clampi(round_down(mc, s.mr), s.mr, 1 << 16);
      b.kc = clampi(round_down(kc, 2), 2, 1 << 16);
      b.nc = clampi(round_down(nc, s.nr), s.nr, 1 << 20);
    }
  }
  const char* small = std::getenv("TENFERRO_FAER_SMALL");
  if (small != nullptr) {
    const double v = std::atof(small);
    if (v >= 0) b.small = b.small_complex = v;
  }
  const char* stream = std::getenv("TENFERRO_FAER_SMALL_STREAM_BYTES");
  if (stream != nullptr) {
    const double v = std::atof(stream);
    if (v >= 0) b.small_stream_bytes = v;
  }
  return b;
}

struct BlockingTable {
  Blocking b[kIsaCount][2];
  BlockingTable() {
    for (int i = 0; i < kIsaCount; ++i) {
      b[i][0] = compute_blocking(static_cast<Isa>(i), 4);
      b[i][1] = compute_blocking(static_cast<Isa>(i), 8);
    }
  }
};
}  // namespace

const Blocking& blocking(Isa isa, int bytes) {
  static const BlockingTable table;
  return table.b[isa][bytes == 4 ? 0 : 1];
}

}  // namespace faer
