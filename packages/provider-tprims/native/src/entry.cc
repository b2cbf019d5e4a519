// run(desc: Float64Array, out: Uint8Array, a: Uint8Array, b?: Uint8Array, abort?: Int32Array): number -- the native
// side of the kernel src/kernels/tprims.ts. supports(kind, op, din, dout): boolean.
//
// Runs one task (a whole request or the part of it the provider gave this worker) on the calling
// thread. `out`, `a`, `b` are byte views of the operands' buffers (SharedArrayBuffer-backed views
// are fine: napi_get_typedarray_info returns their data). Returns 0, or a status code > 0 and
// then nothing was written — except kAborted: the abort word (core's ctx.abortWord; the fifth
// argument, `b` undefined for unary and reduce tasks) was raised while the task ran, and the
// engine stopped between two rows or tiles with the output partly written.
//
// Nothing throws (NAPI_DISABLE_CPP_EXCEPTIONS; -fno-exceptions). The descriptor is copied first
// and each entry read once (a Float64Array over a SharedArrayBuffer could change while it is
// read). Every offset, extent and stride must be an integer in [0, 2^53] (NaN, infinities,
// fractions and negatives are kBadArguments), kind/op/dtypes/ISA/reduced flags exactly one of
// their values, the element count at most 2^53; every operand's data must be aligned to its
// element's component; the farthest element each operand reaches is summed in __int128 (each
// term below 2^106, 32 of them below 2^112: it cannot wrap) and must lie inside its array.
//
// Descriptor (DESC in src/native/binding.ts), strides and offsets in elements of each operand's
// dtype: [kind, op, din, dout, rank, alphaRe, alphaIm, isa, offOut, offA, offB] then rank
// extents, rank output strides, rank strides of a, rank strides of b (binary) or reduced flags
// (reduce; 0 or 1; ignored otherwise). For a reduction the extents are the source's and the
// output has extent 1 on every reduced axis.
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tprims.h"
#include "tprims_addon.h"
#include "tenferro/napi_args.h"

namespace {

using namespace tprims;  // the ABI table's codes and descriptor fields (abi.generated.h, through tprims.h)

constexpr size_t kDescMax = kDescCount + 4 * kMaxRank;
using tenferro::napi_args::as_index;
using tenferro::napi_args::is_int;
using tenferro::napi_args::kMaxSafeIndex;
using tenferro::napi_args::reach_bytes;
using tenferro::napi_args::typed;

// Alignment of one component of each dtype (complex: of one part).
constexpr int kAlign[tprims::kDtypeCount] = {4, 8, 4, 8, 4, 8, 1};

struct Parsed {
  tprims::Task t;
  int isa;
  idx off_out, off_a, off_b;
};

int parse(const double* d, size_t len, Parsed* p) {
  tprims::Task& t = p->t;
  if (len < kDescCount) return tprims::kBadArguments;
  const double kind = d[kKind], op = d[kOp], din = d[kDin], dout = d[kDout];
  if (!(kind == 0 || kind == 1 || kind == 2)) return tprims::kBadArguments;
  t.kind = static_cast<int>(kind);
  const int nops = t.kind == tprims::kUnary ? tprims::kUnaryCount : t.kind == tprims::kBinary ? tprims::kBinaryCount : tprims::kReduceCount;
  if (!is_int(op, 0, nops - 1)) return tprims::kBadArguments;
  t.op = static_cast<int>(op);
  if (!is_int(din, 0, tprims::kDtypeCount - 1)) return tprims::kBadDtype;
  if (!is_int(dout, 0, tprims::kDtypeCount - 1)) return tprims::kBadDtype;
  t.din = static_cast<int>(din);
  t.dout = static_cast<int>(dout);
  idx rank = 0;
  if (!as_index(d[kRank], &rank) || rank > kMaxRank || len < static_cast<size_t>(kDescCount + 4 * rank)) return tprims::kBadArguments;
  t.rank = static_cast<int>(rank);
  if (!as_index(d[kOffOut], &p->off_out) || !as_index(d[kOffA], &p->off_a) || !as_index(d[kOffB], &p->off_b)) return tprims::kBadArguments;
  __int128 total = 1;
  for (int i = 0; i < t.rank; ++i) {
    if (!as_index(d[kDescCount + i], &t.shape[i]) || !as_index(d[kDescCount + rank + i], &t.s_out[i]) || !as_index(d[kDescCount + 2 * rank + i], &t.s_a[i])) {
      return tprims::kBadArguments;
    }
    const double extra = d[kDescCount + 3 * rank + i];
    t.s_b[i] = 0;
    t.reduced[i] = false;
    if (t.kind == tprims::kBinary) {
      if (!as_index(extra, &t.s_b[i])) return tprims::kBadArguments;
    } else if (t.kind == tprims::kReduce) {
      if (!(extra == 0 || extra == 1)) return tprims::kBadArguments;
      t.reduced[i] = extra == 1;
    }
    total *= t.shape[i];
    if (total > static_cast<__int128>(kMaxSafeIndex)) return tprims::kBadArguments;
  }
  t.alpha_re = d[kAlphaRe];
  t.alpha_im = d[kAlphaIm];
  const double isa = d[kIsa];
  if (isa == -1) {
    p->isa = tprims::best_isa();
  } else if (isa == 0 || isa == 1 || isa == 2) {
    p->isa = static_cast<int>(isa);
    if (!tenferro::isa::supported(static_cast<tprims::Isa>(p->isa))) return tprims::kIsaUnavailable;
  } else {
    return tprims::kBadArguments;
  }
  if (!tprims::engine(static_cast<tprims::Isa>(p->isa)).supports(t.kind, t.op, t.din, t.dout)) return tprims::kBadDtype;
  return tprims::kOk;
}

}  // namespace

namespace tprims {

namespace js {

Napi::Value run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto status = [&](int s) { return Napi::Number::New(env, s); };
  if (info.Length() < 3) return status(kBadArguments);
  double desc[kDescMax] = {};
  {
    size_t dlen = 0;
    void* dptr = nullptr;
    if (!typed(info[0], napi_float64_array, &dptr, &dlen)) return status(kBadArguments);
    if (dlen > kDescMax) dlen = kDescMax;
    if (dlen > 0) std::memcpy(desc, dptr, dlen * sizeof(double));
    Parsed p;
    const int ps = parse(desc, dlen, &p);
    if (ps != kOk) return status(ps);
    Task& t = p.t;
    void *vo = nullptr, *va = nullptr, *vb = nullptr;
    size_t lo = 0, la = 0, lb = 0;
    if (!typed(info[1], napi_uint8_array, &vo, &lo) || !typed(info[2], napi_uint8_array, &va, &la)) return status(kBadArguments);
    const bool binary = t.kind == kBinary;
    if (binary && (info.Length() < 4 || !typed(info[3], napi_uint8_array, &vb, &lb))) return status(kBadArguments);
    uint8_t *po = static_cast<uint8_t*>(vo), *pa = static_cast<uint8_t*>(va), *pb = static_cast<uint8_t*>(vb);
    const int bo = kDtypeBytes[t.dout], bi = kDtypeBytes[t.din];
    if (reinterpret_cast<uintptr_t>(po) % kAlign[t.dout] != 0 || reinterpret_cast<uintptr_t>(pa) % kAlign[t.din] != 0 ||
        (binary && reinterpret_cast<uintptr_t>(pb) % kAlign[t.din] != 0)) {
      return status(kBadArguments);
    }
    // The output's extents: the source's, with 1 on every reduced axis.
    idx out_n[kMaxRank];
    for (int i = 0; i < t.rank; ++i) out_n[i] = t.reduced[i] ? 1 : t.shape[i];
    const __int128 ro = reach_bytes(p.off_out, t.rank, out_n, t.s_out, bo);
    const __int128 ra = reach_bytes(p.off_a, t.rank, t.shape, t.s_a, bi);
    const __int128 rb = binary ? reach_bytes(p.off_b, t.rank, t.shape, t.s_b, bi) : 0;
    if (ro > static_cast<__int128>(lo) || ra > static_cast<__int128>(la) || rb > static_cast<__int128>(lb)) return status(kOutOfBounds);
    // The abort word (core's ctx.abortWord): absent/undefined, or an Int32Array of at least one element.
    const int32_t* abort = nullptr;
    if (info.Length() > 4 && !info[4].IsUndefined()) {
      size_t wlen = 0;
      void* wptr = nullptr;
      if (!typed(info[4], napi_int32_array, &wptr, &wlen) || wlen < 1) return status(kBadArguments);
      abort = static_cast<const int32_t*>(wptr);
    }
    if (ro == 0) return status(kOk);  // nothing to write
    if (abort != nullptr && __atomic_load_n(abort, __ATOMIC_RELAXED) != 0) return status(kAborted);
    t.abort = abort;
    t.out = reinterpret_cast<char*>(po + static_cast<size_t>(p.off_out) * bo);
    t.a = reinterpret_cast<const char*>(ra == 0 ? pa : pa + static_cast<size_t>(p.off_a) * bi);
    t.b = reinterpret_cast<const char*>(rb == 0 ? (binary ? pb : pa) : pb + static_cast<size_t>(p.off_b) * bi);
    return status(engine(static_cast<Isa>(p.isa)).run(t));
  }
}

Napi::Value supports(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4) return Napi::Boolean::New(env, false);
  int v[4];
  for (int i = 0; i < 4; ++i) {
    if (!info[i].IsNumber()) return Napi::Boolean::New(env, false);
    const double x = info[i].As<Napi::Number>().DoubleValue();
    if (!is_int(x, 0, 63)) return Napi::Boolean::New(env, false);
    v[i] = static_cast<int>(x);
  }
  return Napi::Boolean::New(env, engine(best_isa()).supports(v[0], v[1], v[2], v[3]));
}

}  // namespace js
}  // namespace tprims
