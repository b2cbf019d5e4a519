// tenferro_linalg.node: the built-in linear-algebra kernels (contract: src/native/binding.ts).
//   run(words: Float64Array, a, b, out0, out1, out2: TypedArray, info: Int32Array, abort?: Int32Array): number
//   info(): { eigen: string, isa: string, notBuilt: string, runsNotBuilt: boolean, compilers: string, descHeader: number, maxBatchAxes: number,
//             dtypesNotBuilt?: string (only a reduced build, #39: tenferro_linalg_f64_only=1 "f32,c64,c128";
//             tenferro_portable=0 "f32,f64" where the process runs the baseline) }
//   abiHash: string -- the hash of native/src/abi.mjs (defineAddon compares it, #40)
// Every word is copied once, then checked in overflow-safe (128-bit) arithmetic: op, dtype, flags,
// extents below 2^31, the batch range inside the batch count, every input offset the job reaches
// inside its buffer, every output (from its offset: #35) and the info words (from theirs) inside
// their buffers, pointers aligned. A job that fails a check is refused with a status code; nothing
// is read or written then. Never throws.
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "linalg.h"
#include "tenferro/napi_args.h"

namespace {

using tfl::Job;
using tfl::Operand;
using i128 = __int128;

constexpr double kMaxExtent = 2147483647.0;

// Typed-array views and exact-integer checks: tenferro/napi_args.h (#40).
using tenferro::napi_args::TypedView;
using tenferro::napi_args::is_int;
inline TypedView view_of(const Napi::Value& v) { return tenferro::napi_args::typed_view(v); }

int64_t real_size(int dtype) { return (dtype == tfl::kF32 || dtype == tfl::kC64) ? 4 : 8; }
int64_t scalar_size(int dtype) { return dtype == tfl::kF32 ? 4 : dtype == tfl::kF64 ? 8 : dtype == tfl::kC64 ? 8 : 16; }

int64_t kind_size(int dtype, tfl::OutKind k) {
  switch (k) {
    case tfl::kReal: return real_size(dtype);
    case tfl::kInt32: return 4;
    case tfl::kComplex: return 2 * real_size(dtype);
    default: return scalar_size(dtype);
  }
}

// Input extents of operand A / B for the job's op; false when the op has no B.
void input_shape(const Job& j, bool isB, int64_t* rows, int64_t* cols, bool* used) {
  *used = true;
  switch (j.op) {
    case tfl::kCholesky: case tfl::kEigh: case tfl::kEig: case tfl::kLuFullPivot:
      *rows = *cols = j.m; *used = !isB; return;
    case tfl::kSolveTriangular:
      if (isB) { *rows = j.m; *cols = j.n; } else { *rows = *cols = (j.flags & tfl::kFlagLeft) ? j.m : j.n; }
      return;
    case tfl::kSolve:
      if (isB) { *rows = j.m; *cols = j.n; } else { *rows = *cols = j.m; }
      return;
    default:
      *rows = j.m; *cols = j.n; *used = !isB; return;
  }
}

bool operand_fits(const Job& j, const Operand& o, int64_t rows, int64_t cols, int64_t count, const TypedView& v, int64_t el) {
  if (o.off < 0 || o.rs < 0 || o.cs < 0) return false;
  if (reinterpret_cast<uintptr_t>(v.data) % static_cast<uintptr_t>(el == 16 ? 8 : el) != 0) return false;
  if (rows == 0 || cols == 0 || count == 0) return true;
  i128 last = static_cast<i128>(o.off) + static_cast<i128>(rows - 1) * o.rs + static_cast<i128>(cols - 1) * o.cs;
  for (int t = 0; t < j.nb; t++) {
    if (o.bs[t] < 0) return false;
    last += static_cast<i128>(j.ext[t] - 1) * o.bs[t];
  }
  return (last + 1) * el <= static_cast<i128>(v.bytes);
}

constexpr double kMaxIdx = 9007199254740991.0;

// Output `o` of a job (its words already copied into `d`): `per` elements of `es` bytes per batch,
// `count` batches, dense from element d[kOffOut + o] of its buffer (argument 3 + o). The offset is
// a non-negative integer and (offset + per·count)·es fits the buffer, in 128-bit arithmetic; the
// pointer at the offset is aligned to the element's component. An unused output (per < 0) is not
// looked at.
int parse_output(const Napi::CallbackInfo& info, const double* d, Job& j, int o, int64_t per, int64_t es, int64_t count) {
  if (per < 0) return tfl::kOk;
  TypedView v = view_of(info[3 + o]);
  if (!v.ok) return tfl::kBadArguments;
  const double off = d[tfl::kOffOut + o];
  if (!is_int(off, 0, kMaxIdx)) return tfl::kOutOfBounds;
  const i128 first = static_cast<i128>(static_cast<int64_t>(off)) * es;
  if (first + static_cast<i128>(per) * count * es > static_cast<i128>(v.bytes)) return tfl::kOutOfBounds;
  uint8_t* p = static_cast<uint8_t*>(v.data) + static_cast<size_t>(first);
  if (reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(es == 16 ? 8 : es) != 0) return tfl::kOutOfBounds;
  j.out[o] = p;
  return tfl::kOk;
}

// The info words (at least `count` from int32 word d[kOffInfo] of the Int32Array's buffer view) and
// the optional abort word of a job.
int parse_info_abort(const Napi::CallbackInfo& info, const double* d, Job& j, int64_t count, double abortAt) {
  TypedView iv = view_of(info[6]);
  if (!iv.ok || iv.type != napi_int32_array) return tfl::kBadArguments;
  const double off = d[tfl::kOffInfo];
  if (!is_int(off, 0, kMaxIdx)) return tfl::kOutOfBounds;
  if ((static_cast<i128>(static_cast<int64_t>(off)) + count) * 4 > static_cast<i128>(iv.bytes)) return tfl::kOutOfBounds;
  j.info = static_cast<int32_t*>(iv.data) + static_cast<int64_t>(off);
  const TypedView av = abortAt >= 0 && info.Length() > 7 ? view_of(info[7]) : TypedView{};
  if (av.ok) {  // anything but a typed array: no abort word
    if (av.type != napi_int32_array || av.bytes < 4) return tfl::kBadArguments;
    j.abort = static_cast<const int32_t*>(av.data);
  }
  return tfl::kOk;
}

// A team task of a blocked factorisation (linalg.h: kLuStep, kCholStep), words `d` already copied:
// one square n×n matrix (no batch axes), 1 ≤ nb ≤ n with ⌈n/nb⌉ ≤ kMaxPanels, words 6..8 and 13..15
// zero; A (read by the gathers) n×n inside its buffer; out[0] n×n, out[1] (LU) n int32, out[2]
// kSyncHeader + ⌈n/nb⌉ int32 (the sync words), info one int32. The pivots the LU tasks read from
// out[1] and the tickets and progress they read from out[2] are checked where they are read (ops.h).
int parse_step(const Napi::CallbackInfo& info, const double* d, Job& j) {
  if (!is_int(d[1], 0, 3)) return tfl::kBadDtype;
  if (!is_int(d[2], 1, kMaxExtent) || d[3] != d[2] || !is_int(d[4], 1, d[2]) || !is_int(d[5], 0, 63) || d[8] != 0) return tfl::kBadArguments;
  j.op = static_cast<int>(d[0]);
  j.dtype = static_cast<int>(d[1]);
  j.m = j.n = static_cast<int64_t>(d[2]);
  j.k = static_cast<int64_t>(d[4]);
  j.flags = static_cast<int>(d[5]);
  j.nb = 0;
  const int64_t n = j.m;
  if (d[6] != 0 || d[7] != 0 || d[13] != 0 || d[14] != 0 || d[15] != 0) return tfl::kBadRange;
  if ((n + j.k - 1) / j.k > tfl::kMaxPanels) return tfl::kBadRange;
  j.b0 = 0;
  j.b1 = 1;
  const double maxIdx = kMaxIdx;
  if (!is_int(d[10], 0, maxIdx) || !is_int(d[11], 0, maxIdx) || !is_int(d[12], 0, maxIdx)) return tfl::kOutOfBounds;
  j.a.off = static_cast<int64_t>(d[10]);
  j.a.rs = static_cast<int64_t>(d[11]);
  j.a.cs = static_cast<int64_t>(d[12]);
  const int64_t el = scalar_size(j.dtype);
  TypedView av = view_of(info[1]);
  if (!av.ok) return tfl::kBadArguments;
  if (!operand_fits(j, j.a, n, n, 1, av, el)) return tfl::kOutOfBounds;
  j.a.data = av.data;
  j.b = j.a;
  for (int o = 0; o < 3; o++) {
    const int s = parse_output(info, d, j, o, tfl::out_elems(j, o), kind_size(j.dtype, tfl::out_kind(j, o)), 1);
    if (s != tfl::kOk) return s;
  }
  return parse_info_abort(info, d, j, 1, d[9]);
}

int parse(const Napi::CallbackInfo& info, Job& j) {
  const TypedView w = info.Length() < 7 ? TypedView{} : view_of(info[0]);
  if (!w.ok || w.type != napi_float64_array) return tfl::kBadArguments;
  const size_t wl = w.length;
  if (wl < static_cast<size_t>(tfl::kHeader) || wl > 256) return tfl::kBadArguments;
  double d[256];
  std::memcpy(d, w.data, wl * sizeof(double));  // read once: the shared words could change meanwhile
  if (is_int(d[0], tfl::kLuStep, tfl::kStepOpEnd - 1)) return parse_step(info, d, j);
  if (!is_int(d[0], 0, tfl::kOpCount - 1)) return tfl::kBadOp;
  if (!is_int(d[1], 0, 3)) return tfl::kBadDtype;
  if (!is_int(d[2], 0, kMaxExtent) || !is_int(d[3], 0, kMaxExtent) || !is_int(d[4], 0, kMaxExtent) || !is_int(d[5], 0, 63)) return tfl::kBadArguments;
  if (!is_int(d[8], 0, tfl::kMaxBatchAxes)) return tfl::kBadArguments;
  j.op = static_cast<int>(d[0]);
  j.dtype = static_cast<int>(d[1]);
  j.m = static_cast<int64_t>(d[2]);
  j.n = static_cast<int64_t>(d[3]);
  j.k = static_cast<int64_t>(d[4]);
  j.flags = static_cast<int>(d[5]);
  j.nb = static_cast<int>(d[8]);
  if (wl < static_cast<size_t>(tfl::kHeader + 3 * j.nb)) return tfl::kBadArguments;
  i128 count = 1;
  for (int t = 0; t < j.nb; t++) {
    double e = d[tfl::kHeader + t];
    if (!is_int(e, 0, kMaxExtent)) return tfl::kBadArguments;
    j.ext[t] = static_cast<int64_t>(e);
    count *= j.ext[t];
    if (count > (static_cast<i128>(1) << 53)) return tfl::kBadArguments;
  }
  const double maxIdx = kMaxIdx;
  if (!is_int(d[6], 0, maxIdx) || !is_int(d[7], 0, maxIdx)) return tfl::kBadRange;
  j.b0 = static_cast<int64_t>(d[6]);
  j.b1 = static_cast<int64_t>(d[7]);
  if (j.b0 > j.b1 || static_cast<i128>(j.b1) > count) return tfl::kBadRange;
  const double abortAt = d[9];
  Operand* ops[2] = {&j.a, &j.b};
  for (int o = 0; o < 2; o++) {
    const double* p = d + 10 + 3 * o;
    if (!is_int(p[0], 0, maxIdx) || !is_int(p[1], 0, maxIdx) || !is_int(p[2], 0, maxIdx)) return tfl::kOutOfBounds;
    ops[o]->off = static_cast<int64_t>(p[0]);
    ops[o]->rs = static_cast<int64_t>(p[1]);
    ops[o]->cs = static_cast<int64_t>(p[2]);
    for (int t = 0; t < j.nb; t++) {
      double s = d[tfl::kHeader + j.nb * (1 + o) + t];
      if (!is_int(s, 0, maxIdx)) return tfl::kOutOfBounds;
      ops[o]->bs[t] = static_cast<int64_t>(s);
    }
  }
  const int64_t n = static_cast<int64_t>(count);
  // Inputs.
  const int64_t el = scalar_size(j.dtype);
  for (int o = 0; o < 2; o++) {
    int64_t rows = 0, cols = 0;
    bool used = false;
    input_shape(j, o == 1, &rows, &cols, &used);
    if (!used) continue;
    TypedView v = view_of(info[1 + o]);
    if (!v.ok) return tfl::kBadArguments;
    if (!operand_fits(j, *ops[o], rows, cols, n, v, el)) return tfl::kOutOfBounds;
    ops[o]->data = v.data;
  }
  // Outputs: dense, batch-contiguous, each from its offset.
  for (int o = 0; o < 3; o++) {
    const int s = parse_output(info, d, j, o, tfl::out_elems(j, o), kind_size(j.dtype, tfl::out_kind(j, o)), n);
    if (s != tfl::kOk) return s;
  }
  return parse_info_abort(info, d, j, n, abortAt);
}

Napi::Value run(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Job j;
  int s = parse(info, j);
  if (s != tfl::kOk) return Napi::Number::New(env, s);
  return Napi::Number::New(env, tfl::run(j));
}

Napi::Value info_fn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("eigen", Napi::String::New(env, tfl::eigen_version()));
  o.Set("isa", Napi::String::New(env, tfl::isa_name(tfl::isa())));
  o.Set("notBuilt", Napi::String::New(env, tfl::not_built()));
  o.Set("runsNotBuilt", Napi::Boolean::New(env, tfl::not_built_runs_here()));
  // Only a reduced build reports the dtypes it left out (binding.gyp: tenferro_linalg_f64_only, or
  // tenferro_portable=0 on a CPU that runs the baseline, #39).
  if (const char* dtypes = tfl::dtypes_not_built()) o.Set("dtypesNotBuilt", Napi::String::New(env, dtypes));
  o.Set("compilers", Napi::String::New(env, tfl::compilers()));
  o.Set("descHeader", Napi::Number::New(env, tfl::kHeader));
  o.Set("maxBatchAxes", Napi::Number::New(env, tfl::kMaxBatchAxes));
  return o;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  exports.Set("run", Napi::Function::New(env, run, "run"));
  exports.Set("info", Napi::Function::New(env, info_fn, "info"));
  exports.Set("descHeader", Napi::Number::New(env, tfl::kHeader));
  exports.Set("abiHash", Napi::String::New(env, tfl::kAbiHash));
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_linalg, init)
