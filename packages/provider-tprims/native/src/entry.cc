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

namespace {

using tprims::idx;
using tprims::kMaxRank;

enum Desc : int {
  kKind = 0,
  kOp = 1,
  kDin = 2,
  kDout = 3,
  kRank = 4,
  kAlphaRe = 5,
  kAlphaIm = 6,
  kIsa = 7,
  kOffOut = 8,
  kOffA = 9,
  kOffB = 10,
  kHeader = 11,
};

constexpr size_t kDescMax = kHeader + 4 * kMaxRank;
constexpr double kMaxSafe = 9007199254740992.0;  // 2^53

bool as_index(double v, idx* out) {
  if (!(v >= 0 && v <= kMaxSafe) || std::floor(v) != v) return false;
  *out = static_cast<idx>(v);
  return true;
}

bool bytes_of(const Napi::Value& v, uint8_t** data, size_t* length) {
  if (!v.IsTypedArray()) return false;
  napi_typedarray_type type;
  size_t len = 0;
  void* ptr = nullptr;
  napi_value ab;
  size_t byte_offset = 0;
  if (napi_get_typedarray_info(v.Env(), v, &type, &len, &ptr, &ab, &byte_offset) != napi_ok) return false;
  if (type != napi_uint8_array) return false;
  *data = static_cast<uint8_t*>(ptr);
  *length = len;
  return true;
}

// Alignment of one component of each dtype (complex: of one part).
constexpr int kAlign[tprims::kDtypeCount] = {4, 8, 4, 8, 4, 8, 1};

// Bytes past the start of the array the operand reaches (0: nothing).
__int128 reach(idx off, const idx* n, const idx* s, int rank, int bytes) {
  __int128 hi = off;
  for (int i = 0; i < rank; ++i) {
    if (n[i] == 0) return 0;
    hi += static_cast<__int128>(n[i] - 1) * s[i];
  }
  return (hi + 1) * bytes;
}

struct Parsed {
  tprims::Task t;
  int isa;
  idx off_out, off_a, off_b;
};

int parse(const double* d, size_t len, Parsed* p) {
  tprims::Task& t = p->t;
  if (len < kHeader) return tprims::kBadArguments;
  const double kind = d[kKind], op = d[kOp], din = d[kDin], dout = d[kDout];
  if (!(kind == 0 || kind == 1 || kind == 2)) return tprims::kBadArguments;
  t.kind = static_cast<int>(kind);
  const int nops = t.kind == tprims::kUnary ? tprims::kUnaryCount : t.kind == tprims::kBinary ? tprims::kBinaryCount : tprims::kReduceCount;
  if (!(op >= 0 && op < nops) || std::floor(op) != op) return tprims::kBadArguments;
  t.op = static_cast<int>(op);
  if (!(din >= 0 && din < tprims::kDtypeCount) || std::floor(din) != din) return tprims::kBadDtype;
  if (!(dout >= 0 && dout < tprims::kDtypeCount) || std::floor(dout) != dout) return tprims::kBadDtype;
  t.din = static_cast<int>(din);
  t.dout = static_cast<int>(dout);
  idx rank = 0;
  if (!as_index(d[kRank], &rank) || rank > kMaxRank || len < static_cast<size_t>(kHeader + 4 * rank)) return tprims::kBadArguments;
  t.rank = static_cast<int>(rank);
  if (!as_index(d[kOffOut], &p->off_out) || !as_index(d[kOffA], &p->off_a) || !as_index(d[kOffB], &p->off_b)) return tprims::kBadArguments;
  __int128 total = 1;
  for (int i = 0; i < t.rank; ++i) {
    if (!as_index(d[kHeader + i], &t.shape[i]) || !as_index(d[kHeader + rank + i], &t.s_out[i]) || !as_index(d[kHeader + 2 * rank + i], &t.s_a[i])) {
      return tprims::kBadArguments;
    }
    const double extra = d[kHeader + 3 * rank + i];
    t.s_b[i] = 0;
    t.reduced[i] = false;
    if (t.kind == tprims::kBinary) {
      if (!as_index(extra, &t.s_b[i])) return tprims::kBadArguments;
    } else if (t.kind == tprims::kReduce) {
      if (!(extra == 0 || extra == 1)) return tprims::kBadArguments;
      t.reduced[i] = extra == 1;
    }
    total *= t.shape[i];
    if (total > static_cast<__int128>(kMaxSafe)) return tprims::kBadArguments;
  }
  t.alpha_re = d[kAlphaRe];
  t.alpha_im = d[kAlphaIm];
  const double isa = d[kIsa];
  if (isa == -1) {
    p->isa = tprims::best_isa();
  } else if (isa == 0 || isa == 1 || isa == 2) {
    p->isa = static_cast<int>(isa);
    if (!tprims::isa_supported(static_cast<tprims::Isa>(p->isa))) return tprims::kIsaUnavailable;
  } else {
    return tprims::kBadArguments;
  }
  if (!tprims::engine(static_cast<tprims::Isa>(p->isa)).supports(t.kind, t.op, t.din, t.dout)) return tprims::kBadDtype;
  return tprims::kOk;
}

}  // namespace

namespace tprims {

const int kDescHeader = kHeader;

namespace js {

Napi::Value run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto status = [&](int s) { return Napi::Number::New(env, s); };
  if (info.Length() < 3 || !info[0].IsTypedArray()) return status(kBadArguments);
  Napi::TypedArray dv = info[0].As<Napi::TypedArray>();
  if (dv.TypedArrayType() != napi_float64_array) return status(kBadArguments);
  double desc[kDescMax] = {};
  {
    napi_typedarray_type type;
    size_t dlen = 0;
    void* dptr = nullptr;
    napi_value ab;
    size_t byte_offset = 0;
    if (napi_get_typedarray_info(env, info[0], &type, &dlen, &dptr, &ab, &byte_offset) != napi_ok) return status(kBadArguments);
    if (dlen > kDescMax) dlen = kDescMax;
    if (dlen > 0) std::memcpy(desc, dptr, dlen * sizeof(double));
    Parsed p;
    const int ps = parse(desc, dlen, &p);
    if (ps != kOk) return status(ps);
    Task& t = p.t;
    uint8_t *po = nullptr, *pa = nullptr, *pb = nullptr;
    size_t lo = 0, la = 0, lb = 0;
    if (!bytes_of(info[1], &po, &lo) || !bytes_of(info[2], &pa, &la)) return status(kBadArguments);
    const bool binary = t.kind == kBinary;
    if (binary && (info.Length() < 4 || !bytes_of(info[3], &pb, &lb))) return status(kBadArguments);
    const int bo = kDtypeBytes[t.dout], bi = kDtypeBytes[t.din];
    if (reinterpret_cast<uintptr_t>(po) % kAlign[t.dout] != 0 || reinterpret_cast<uintptr_t>(pa) % kAlign[t.din] != 0 ||
        (binary && reinterpret_cast<uintptr_t>(pb) % kAlign[t.din] != 0)) {
      return status(kBadArguments);
    }
    // The output's extents: the source's, with 1 on every reduced axis.
    idx out_n[kMaxRank];
    for (int i = 0; i < t.rank; ++i) out_n[i] = t.reduced[i] ? 1 : t.shape[i];
    const __int128 ro = reach(p.off_out, out_n, t.s_out, t.rank, bo);
    const __int128 ra = reach(p.off_a, t.shape, t.s_a, t.rank, bi);
    const __int128 rb = binary ? reach(p.off_b, t.shape, t.s_b, t.rank, bi) : 0;
    if (ro > static_cast<__int128>(lo) || ra > static_cast<__int128>(la) || rb > static_cast<__int128>(lb)) return status(kOutOfBounds);
    // The abort word (core's ctx.abortWord): absent/undefined, or an Int32Array of at least one element.
    const int32_t* abort = nullptr;
    if (info.Length() > 4 && !info[4].IsUndefined()) {
      napi_typedarray_type wtype;
      size_t wlen = 0;
      void* wptr = nullptr;
      napi_value wab;
      size_t woff = 0;
      if (!info[4].IsTypedArray() || napi_get_typedarray_info(env, info[4], &wtype, &wlen, &wptr, &wab, &woff) != napi_ok || wtype != napi_int32_array || wlen < 1) {
        return status(kBadArguments);
      }
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
    if (!(x >= 0 && x < 64) || std::floor(x) != x) return Napi::Boolean::New(env, false);
    v[i] = static_cast<int>(x);
  }
  return Napi::Boolean::New(env, engine(best_isa()).supports(v[0], v[1], v[2], v[3]));
}

}  // namespace js
}  // namespace tprims
