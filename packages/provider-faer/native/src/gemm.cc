// gemm(desc: Float64Array, a, b, c): number -- the native side of the kernel src/kernels/gemm.ts.
//
// Runs one GEMM request (or a sub-range of it) on the calling thread. `a`, `b`, `c` are
// Float32Array (f32, c64) or Float64Array (f64, c128) views of the operands' buffers
// (SharedArrayBuffer-backed views are fine: napi_get_typedarray_info returns their data).
// `desc` holds the request's numbers (layout in Desc below / DESC in src/native/binding.ts).
// Returns 0, or a status code > 0 (nothing is written unless the status is 0, or kAborted: then C
// is partly written, as core documents for ExecutionAborted).
//
// Optional sixth to eighth arguments `counter, axis, size` share the task's M (axis 0) or N
// (axis 1) range between the lanes of a split: each claims chunk c = counter++ (a relaxed atomic
// fetch-add on counter[0], an Int32Array the lanes share) and runs rows/columns
// [lo + c·size, lo + (c+1)·size) of its range, until the range is used up — a lane that starts
// late takes fewer chunks. Everything is checked before the first chunk runs; a chunk's refusal
// (only kNoMemory or kAborted can happen then) leaves the chunks already run written.
//
// An optional fifth argument, `abort` (an Int32Array over a SharedArrayBuffer: core's
// ctx.abortWord), is polled by the engines at block boundaries (relaxed atomic loads, see
// gemm_engine.h); once it is non-zero the call stops and answers kAborted, with C partly written.
//
// Nothing throws (NAPI_DISABLE_CPP_EXCEPTIONS; -fno-exceptions): arguments are checked and
// failures are status codes. Everything the request reaches is bounds-checked against the
// arrays before the engine runs (defence in depth: core and src/validate-request.ts validated it
// already), in arithmetic that cannot overflow: the descriptor is copied first and each entry
// read once (a Float64Array over a SharedArrayBuffer could change while it is read); every index,
// stride and extent must be an integer in [0, 2^53] (NaN, infinities, fractions and negatives
// are kBadArguments), dtype, ISA and the conjugation flags must be exactly one of their values;
// the batch count is at most 2^53; reaches are summed in __int128 (each term below 2^106, 32 of
// them below 2^112: a sum can never wrap around into "reaches nothing", which only an empty
// operand does).
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "faer_addon.h"
#include "faer_gemm.h"
#include "tenferro/napi_args.h"
#include "abi.generated.h"

namespace {

using faer::idx;

// Status codes, descriptor fields and limits: native/src/abi.mjs, shared with the TypeScript (#40).
using namespace faer::abi;
static_assert(faer::kMaxBatchRank == kMaxBatchRank, "faer_gemm.h's batch axes are the ABI table's");

constexpr int kMaxRank = faer::kMaxBatchRank;
constexpr int kMaxSummed = faer::kMaxBatchRank;  // summed axes (CpuGemmRequest.summed) taken, like batch axes
constexpr size_t kDescMax = kDescCount + 4 * kMaxRank + 1 + 3 * kMaxSummed;  // the longest descriptor read
using tenferro::napi_args::as_index;
using tenferro::napi_args::kMaxSafeIndex;
using tenferro::napi_args::typed;

struct Operand {
  idx off, rs, cs;
  idx bs[kMaxRank];
};

struct Request {
  int dtype;
  idx m, n, k;
  Operand a, b, c;
  double alpha_re, alpha_im, beta_re, beta_im;
  bool conj_a, conj_b;
  int isa;
  idx m0, m1, n0, n1, b0, b1;
  int rank;
  idx ext[kMaxRank];
  // Summed axes: out = alpha * sum over their multi-indices of A(s) B(s) + beta * out, where A(s)
  // is A moved by sum s[t] * sa[t] (B likewise); scount is the product of sext (at most 2^53).
  int srank;
  idx sext[kMaxSummed], sa[kMaxSummed], sb[kMaxSummed];
  idx scount;
};

int parse(const double* d, size_t len, Request* r) {
  if (len < kDescCount) return kBadArguments;
  const double dt = d[kDtype];
  if (!(dt == 0 || dt == 1 || dt == 2 || dt == 3)) return kBadDtype;
  r->dtype = static_cast<int>(dt);
  idx rank = 0;
  if (!as_index(d[kRank], &rank) || rank > kMaxRank || len < static_cast<size_t>(kDescCount + 4 * rank)) return kBadArguments;
  r->rank = static_cast<int>(rank);
  const int ints[] = {kM, kN, kK, kOffA, kRsA, kCsA, kOffB, kRsB, kCsB, kOffC, kRsC, kCsC, kM0, kM1, kN0, kN1, kB0, kB1};
  // Only the fields read are set: the batch strides past `rank` are never read, and zeroing
  // them (rep stos of ~1 KiB) was a tenth of the call's fixed cost.
  idx v[kDescCount];
  for (int f : ints) {
    if (!as_index(d[f], &v[f])) return kBadArguments;
  }
  r->m = v[kM];
  r->n = v[kN];
  r->k = v[kK];
  r->a.off = v[kOffA], r->a.rs = v[kRsA], r->a.cs = v[kCsA];
  r->b.off = v[kOffB], r->b.rs = v[kRsB], r->b.cs = v[kCsB];
  r->c.off = v[kOffC], r->c.rs = v[kRsC], r->c.cs = v[kCsC];
  r->m0 = v[kM0];
  r->m1 = v[kM1];
  r->n0 = v[kN0];
  r->n1 = v[kN1];
  r->b0 = v[kB0];
  r->b1 = v[kB1];
  for (int t = 0; t < r->rank; ++t) {
    if (!as_index(d[kDescCount + t], &r->ext[t]) || !as_index(d[kDescCount + rank + t], &r->a.bs[t]) || !as_index(d[kDescCount + 2 * rank + t], &r->b.bs[t]) ||
        !as_index(d[kDescCount + 3 * rank + t], &r->c.bs[t])) {
      return kBadArguments;
    }
  }
  r->alpha_re = d[kAlphaRe];
  r->alpha_im = d[kAlphaIm];
  r->beta_re = d[kBetaRe];
  r->beta_im = d[kBetaIm];
  const double ca = d[kConjA], cb = d[kConjB];
  if (!(ca == 0 || ca == 1) || !(cb == 0 || cb == 1)) return kBadArguments;
  r->conj_a = ca == 1;
  r->conj_b = cb == 1;
  const double isa = d[kIsa];
  if (isa == -1) {
    r->isa = faer::best_isa();
  } else if (isa == 0 || isa == 1 || isa == 2) {
    r->isa = static_cast<int>(isa);
    if (!tenferro::isa::supported(static_cast<faer::Isa>(r->isa))) return kIsaUnavailable;
  } else {
    return kBadArguments;
  }
  if (r->m0 > r->m1 || r->m1 > r->m || r->n0 > r->n1 || r->n1 > r->n) return kBadRange;
  __int128 total = 1;
  for (int t = 0; t < r->rank; ++t) {
    total *= r->ext[t];
    if (total > static_cast<__int128>(kMaxSafeIndex)) return kBadArguments;
  }
  if (r->b0 > r->b1 || static_cast<__int128>(r->b1) > total) return kBadRange;
  // The optional summed block after the batch strides: its count, then extents, A and B strides.
  r->srank = 0;
  r->scount = 1;
  const size_t at = static_cast<size_t>(kDescCount + 4 * rank);
  if (len > at) {
    idx srank = 0;
    if (!as_index(d[at], &srank) || srank > kMaxSummed || len < at + 1 + 3 * static_cast<size_t>(srank)) return kBadArguments;
    r->srank = static_cast<int>(srank);
    __int128 count = 1;
    for (int t = 0; t < r->srank; ++t) {
      if (!as_index(d[at + 1 + t], &r->sext[t]) || !as_index(d[at + 1 + srank + t], &r->sa[t]) || !as_index(d[at + 1 + 2 * srank + t], &r->sb[t])) {
        return kBadArguments;
      }
      count *= r->sext[t];
      if (count > static_cast<__int128>(kMaxSafeIndex)) return kBadArguments;
    }
    r->scount = static_cast<idx>(count);
  }
  // An empty sum reads neither A nor B: out = beta * out, which a GEMM with k = 0 computes.
  if (r->scount == 0) r->k = 0, r->srank = 0, r->scount = 1;
  return kOk;
}

// The largest scalar index an operand of rows x cols reaches (over all batches and, with `summed`
// its summed strides, all summed items), +1; 0 if empty.
__int128 extent_of(const Request& r, const Operand& o, idx rows, idx cols, int lanes, const idx* summed = nullptr) {
  if (rows == 0 || cols == 0) return 0;
  __int128 hi = o.off + static_cast<__int128>(rows - 1) * o.rs + static_cast<__int128>(cols - 1) * o.cs;
  for (int t = 0; t < r.rank; ++t) {
    if (r.ext[t] == 0) return 0;
    hi += static_cast<__int128>(r.ext[t] - 1) * o.bs[t];
  }
  if (summed != nullptr) {
    for (int t = 0; t < r.srank; ++t) hi += static_cast<__int128>(r.sext[t] - 1) * summed[t];
  }
  return hi * lanes + lanes;
}


// The engine request of the task's first batch item (offsets oa, ob, oc in elements).
template <class T>
faer::RealGemm<T> real_request(const Request& r, const T* a, const T* b, T* c, const idx* oa, const idx* ob, const idx* oc, const int32_t* abort) {
  faer::RealGemm<T> g;
  g.m = r.m1 - r.m0;
  g.n = r.n1 - r.n0;
  g.k = r.k;
  g.a = a + *oa + r.m0 * r.a.rs;
  g.rsa = r.a.rs;
  g.csa = r.a.cs;
  g.b = b + *ob + r.n0 * r.b.cs;
  g.rsb = r.b.rs;
  g.csb = r.b.cs;
  g.c = c + *oc + r.m0 * r.c.rs + r.n0 * r.c.cs;
  g.rsc = r.c.rs;
  g.csc = r.c.cs;
  g.alpha = static_cast<T>(r.alpha_re);
  g.beta = static_cast<T>(r.beta_re);
  g.abort = abort;
  return g;
}

template <class T>
faer::ComplexGemm<T> complex_request(const Request& r, const T* a, const T* b, T* c, const idx* oa, const idx* ob, const idx* oc,
                                     const int32_t* abort) {
  faer::ComplexGemm<T> g;
  g.m = r.m1 - r.m0;
  g.n = r.n1 - r.n0;
  g.k = r.k;
  g.a = a + 2 * (*oa + r.m0 * r.a.rs);
  g.rsa = r.a.rs;
  g.csa = r.a.cs;
  g.b = b + 2 * (*ob + r.n0 * r.b.cs);
  g.rsb = r.b.rs;
  g.csb = r.b.cs;
  g.c = c + 2 * (*oc + r.m0 * r.c.rs + r.n0 * r.c.cs);
  g.rsc = r.c.rs;
  g.csc = r.c.cs;
  g.alpha_re = static_cast<T>(r.alpha_re);
  g.alpha_im = static_cast<T>(r.alpha_im);
  g.beta_re = static_cast<T>(r.beta_re);
  g.beta_im = static_cast<T>(r.beta_im);
  g.conj_a = r.conj_a;
  g.conj_b = r.conj_b;
  g.abort = abort;
  return g;
}

// Runs the (bounds-checked) task `r`, without its summed axes, on the engine of its ISA: one
// engine call over its batch range.
int run_engine(const Request& r, bool f32, int lanes, void* pa, void* pb, void* pc, const int32_t* abort);

int run_item(const Request& r, bool f32, int lanes, void* pa, void* pb, void* pc, const int32_t* abort) {
  if (r.k != 0) return run_engine(r, f32, lanes, pa, pb, pc, abort);
  // k = 0 reads neither A nor B and their reach was not bounded above: follow no offset into them.
  Request z = r;
  z.a = z.b = Operand{};
  return run_engine(z, f32, lanes, pa, pb, pc, abort);
}

// run_item's engine call (A and B harmless when k = 0; the Request is not copied on the hot path).
int run_engine(const Request& r, bool f32, int lanes, void* pa, void* pb, void* pc, const int32_t* abort) {
  const faer::Isa isa = static_cast<faer::Isa>(r.isa);
  const faer::IsaEngine& e = faer::engine(isa);
  const faer::Blocking& bl = faer::blocking(isa, f32 ? 4 : 8);

  // The first item's multi-index and offsets (last axis fastest); the engine walks the rest.
  faer::BatchWalk w;
  w.rank = r.rank;
  w.count = r.b1 - r.b0;
  idx oa = r.a.off, ob = r.b.off, oc = r.c.off;
  {
    idx l = r.b0;
    for (int t = r.rank - 1; t >= 0; --t) {
      w.ext[t] = r.ext[t];
      w.index[t] = l % r.ext[t];
      l /= r.ext[t];
      oa += w.index[t] * r.a.bs[t];
      ob += w.index[t] * r.b.bs[t];
      oc += w.index[t] * r.c.bs[t];
      w.sa[t] = r.a.bs[t] * lanes;
      w.sb[t] = r.b.bs[t] * lanes;
      w.sc[t] = r.c.bs[t] * lanes;
    }
  }
  int done = faer::kEngineDone;
  switch (r.dtype) {
    case 0:
      done = e.batch_f32(real_request<float>(r, static_cast<const float*>(pa), static_cast<const float*>(pb), static_cast<float*>(pc), &oa, &ob, &oc, abort),
                         w, bl);
      break;
    case 1:
      done = e.batch_f64(
          real_request<double>(r, static_cast<const double*>(pa), static_cast<const double*>(pb), static_cast<double*>(pc), &oa, &ob, &oc, abort), w, bl);
      break;
    case 2:
      done = e.batch_c64(
          complex_request<float>(r, static_cast<const float*>(pa), static_cast<const float*>(pb), static_cast<float*>(pc), &oa, &ob, &oc, abort), w, bl);
      break;
    default:
      done = e.batch_c128(
          complex_request<double>(r, static_cast<const double*>(pa), static_cast<const double*>(pb), static_cast<double*>(pc), &oa, &ob, &oc, abort), w,
          bl);
      break;
  }
  if (done == faer::kEngineAborted) return kAborted;
  if (done == faer::kEngineNoMemory) return kNoMemory;
  return kOk;
}

// Elements of the dense block a summed real task may accumulate in (scratch slot 2, 512 KiB of f64).
constexpr idx kSummedScratchMax = idx{1} << 16;


// Whether the engine's kernels store a C whose rows (`want_rows`) or columns are unit-stride as
// whole vectors: the small path runs in the orientation with a column-major A (the first operand
// as given when its rows are unit-stride, else the transposed product when B's columns are) and
// writes C's unit stride along its M; so does the packed path, which prefers C column-major.
bool wants_rows_unit(const Request& r) { return r.a.rs == 1 || r.b.cs != 1; }

// Move `item`'s A and B to the next summed item (odometer over r's summed axes, last fastest).
void next_summed_item(const Request& r, idx* index, Request* item) {
  for (int t = r.srank - 1; t >= 0; --t) {
    if (++index[t] < r.sext[t]) {
      item->a.off += r.sa[t], item->b.off += r.sb[t];
      return;
    }
    index[t] = 0;
    item->a.off -= (r.sext[t] - 1) * r.sa[t], item->b.off -= (r.sext[t] - 1) * r.sb[t];
  }
}

// Runs the (bounds-checked) real task `r` with summed items into a dense block laid out the way
// the kernels store C fastest (see wants_rows_unit), then C = alpha·block + beta·C once: the
// items' C updates are vector loads and stores of a block in cache instead of strided ones.
template <class T>
int run_summed_block(const Request& r, bool f32, T* pc, const int32_t* abort, void* pa, void* pb, T* block);

// Which summed real tasks gather their items' K steps into one GEMM (run_gather_task): items
// whose own k is below kGatherItemK into a block of C of at least kGatherMinBlock elements, at
// most kGatherMaxK steps in all (the two offset tables take 16 bytes a step). The others run
// item by item, where each item is a GEMM of its own. Measured f64 on a Zen 3 against the
// per-item form (both addons loaded in one process, interleaved; bench/summed.mjs shows the thin
// case against a GEMM on a copied operand), gathering ran m = n = 64 with k = 4 and 256 items 2.3x faster
// (0.25 against 0.59 ms; 1,024 items of k = 2: 4.8x), m = n = 256 with k = 16 1.6x, k = 32
// and 48 10 % faster; at k = 64 (d = 64 cubes) the same in f64 and 20 % slower in f32, at
// m = n <= 24 up to 20 % slower (the small unpacked kernel wins there).
constexpr idx kGatherItemK = 64;
constexpr idx kGatherMinBlock = 1024;
constexpr idx kGatherMaxK = idx{1} << 20;

// The stride of `table` when its steps are affine (table[p] == p * stride for every p; its first
// entry is 0), else -1.
idx affine_stride(const idx* table, idx steps) {
  const idx stride = steps > 1 ? table[1] : 0;
  for (idx p = 0; p < steps; ++p) {
    if (table[p] != p * stride) return -1;
  }
  return stride;
}

// Runs the (bounds-checked) real task `r`, which has summed items and k > 0, as one GEMM per batch
// item whose K gathers every item's steps (items in odometer order, last summed axis fastest,
// then k): each operand is packed once, straight from its strides, and C is read and written once
// per K block instead of once per item (256 items of k = 4 into 64×64: 256 passes over C before).
// An operand whose gathered K is affine (A[i,j,k] row-major: j then k are consecutive) keeps a
// plain K stride, and its panels are packed as in any GEMM. The tables live in scratch slot 3.
template <class T>
int run_gather_task(const Request& r, const T* pa, const T* pb, T* pc, const int32_t* abort) {
  const idx steps = r.scount * r.k;
  idx* ka = static_cast<idx*>(faer::scratch(3, static_cast<size_t>(2 * steps) * sizeof(idx)));
  if (ka == nullptr) return kNoMemory;
  idx* kb = ka + steps;
  idx index[kMaxSummed] = {};
  idx oa = 0, ob = 0;
  for (idx s = 0, p = 0; s < r.scount; ++s) {
    if (s > 0) {
      for (int t = r.srank - 1; t >= 0; --t) {
        if (++index[t] < r.sext[t]) {
          oa += r.sa[t], ob += r.sb[t];
          break;
        }
        index[t] = 0;
        oa -= (r.sext[t] - 1) * r.sa[t], ob -= (r.sext[t] - 1) * r.sb[t];
      }
    }
    for (idx kk = 0; kk < r.k; ++kk, ++p) ka[p] = oa + kk * r.a.cs, kb[p] = ob + kk * r.b.rs;
  }
  const idx stride_a = affine_stride(ka, steps), stride_b = affine_stride(kb, steps);
  const faer::Isa isa = static_cast<faer::Isa>(r.isa);
  const faer::IsaEngine& e = faer::engine(isa);
  const faer::Blocking& bl = faer::blocking(isa, sizeof(T));
  for (idx l = r.b0; l < r.b1; ++l) {
    if (faer::abort_raised(abort)) return kAborted;
    idx oa_b = r.a.off, ob_b = r.b.off, oc_b = r.c.off, rest = l;
    for (int t = r.rank - 1; t >= 0; --t) {
      const idx at = rest % r.ext[t];
      rest /= r.ext[t];
      oa_b += at * r.a.bs[t], ob_b += at * r.b.bs[t], oc_b += at * r.c.bs[t];
    }
    // The batch item's plain request, its K replaced by the gathered one.
    const faer::RealGemm<T> p = real_request<T>(r, pa, pb, pc, &oa_b, &ob_b, &oc_b, abort);
    const faer::GatherGemm<T> g{
        p.m, p.n, steps,                                                       // extents
        p.a, p.rsa, stride_a < 0 ? 0 : stride_a, stride_a < 0 ? ka : nullptr,  // A: rows, K
        p.b, stride_b < 0 ? 0 : stride_b, p.csb, stride_b < 0 ? kb : nullptr,  // B: K, columns
        p.c, p.rsc, p.csc, p.alpha, p.beta, p.abort};
    int done;
    if constexpr (sizeof(T) == 4) {
      done = e.gather_f32(g, bl);
    } else {
      done = e.gather_f64(g, bl);
    }
    if (done == faer::kEngineAborted) return kAborted;
    if (done == faer::kEngineNoMemory) return kNoMemory;
  }
  return kOk;
}

// Runs the (bounds-checked) task `r`. A real task whose summed items are thin (k below
// kGatherItemK) into a large enough block of C gathers them into one K (run_gather_task); any
// other runs one run_item per summed item (last axis fastest), A and B moved to the item, beta
// applied by the first only (then 1: the items accumulate into C), or, when the kernels would
// write its C element by element and it is one small real batch item, accumulates in a dense
// block (run_summed_block).
int run_task(const Request& r, bool f32, int lanes, void* pa, void* pb, void* pc, const int32_t* abort) {
  if (r.srank == 0 || r.k == 0) return run_item(r, f32, lanes, pa, pb, pc, abort);
  if (lanes == 1 && r.scount > 1 && r.k < kGatherItemK && (r.m1 - r.m0) * (r.n1 - r.n0) >= kGatherMinBlock && r.scount <= kGatherMaxK / r.k) {
    return f32 ? run_gather_task<float>(r, static_cast<const float*>(pa), static_cast<const float*>(pb), static_cast<float*>(pc), abort)
               : run_gather_task<double>(r, static_cast<const double*>(pa), static_cast<const double*>(pb), static_cast<double*>(pc), abort);
  }
  const idx mp = r.m1 - r.m0, np = r.n1 - r.n0;
  const bool rows_unit = wants_rows_unit(r);
  if (lanes == 1 && r.scount > 1 && r.b1 - r.b0 == 1 && mp * np <= kSummedScratchMax && (rows_unit ? r.c.rs != 1 : r.c.cs != 1)) {
    void* block = faer::scratch(2, static_cast<size_t>(mp * np) * (f32 ? sizeof(float) : sizeof(double)));
    if (block == nullptr) return kNoMemory;
    return f32 ? run_summed_block<float>(r, true, static_cast<float*>(pc), abort, pa, pb, static_cast<float*>(block))
               : run_summed_block<double>(r, false, static_cast<double*>(pc), abort, pa, pb, static_cast<double*>(block));
  }
  idx index[kMaxSummed] = {};
  Request item = r;
  item.srank = 0;
  for (idx s = 0; s < r.scount; ++s) {
    if (s > 0) {
      item.beta_re = 1, item.beta_im = 0;
      next_summed_item(r, index, &item);
    }
    const int st = run_item(item, f32, lanes, pa, pb, pc, abort);
    if (st != kOk) return st;
  }
  return kOk;
}

template <class T>
int run_summed_block(const Request& r, bool f32, T* pc, const int32_t* abort, void* pa, void* pb, T* block) {
  const idx mp = r.m1 - r.m0, np = r.n1 - r.n0;
  const bool rows_unit = wants_rows_unit(r);
  // The block's item: rows [0, mp) and columns [0, np) of A and B moved to the task's range, the
  // batch item's offsets folded in, alpha 1 (applied once at the end).
  Request item = r;
  item.srank = 0;
  item.rank = 0;
  item.b0 = 0, item.b1 = 1;
  idx l = r.b0;
  for (int t = r.rank - 1; t >= 0; --t) {
    const idx at = l % r.ext[t];
    l /= r.ext[t];
    item.a.off += at * r.a.bs[t], item.b.off += at * r.b.bs[t], item.c.off += at * r.c.bs[t];
  }
  const Operand c = item.c;
  item.a.off += r.m0 * r.a.rs, item.b.off += r.n0 * r.b.cs;
  item.m = mp, item.n = np, item.m0 = 0, item.m1 = mp, item.n0 = 0, item.n1 = np;
  item.c = rows_unit ? Operand{0, 1, mp, {}} : Operand{0, np, 1, {}};
  item.alpha_re = 1, item.alpha_im = 0;
  idx index[kMaxSummed] = {};
  for (idx s = 0; s < r.scount; ++s) {
    if (s > 0) {
      item.beta_re = 1, item.beta_im = 0;
      next_summed_item(r, index, &item);
    } else {
      item.beta_re = 0, item.beta_im = 0;
    }
    const int st = run_item(item, f32, 1, pa, pb, block, abort);
    if (st != kOk) return st;
  }
  const T alpha = static_cast<T>(r.alpha_re), beta = static_cast<T>(r.beta_re);
  const idx brs = item.c.rs, bcs = item.c.cs;
  for (idx j = 0; j < np; ++j) {
    T* cj = pc + c.off + r.m0 * c.rs + (r.n0 + j) * c.cs;
    const T* sj = block + j * bcs;
    for (idx i = 0; i < mp; ++i) {
      const T v = alpha * sj[i * brs];
      cj[i * c.rs] = beta == T(0) ? v : v + beta * cj[i * c.rs];
    }
  }
  return kOk;
}

}  // namespace

namespace faer {

namespace js {

Napi::Value gemm(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto status = [&](int s) { return Napi::Number::New(env, s); };
  if (info.Length() < 4) return status(kBadArguments);
  void* dptr = nullptr;
  size_t dlen = 0;
  if (!typed(info[0], napi_float64_array, &dptr, &dlen)) return status(kBadArguments);
  // The abort word: absent/undefined (never stops early) or an Int32Array of at least one element.
  const int32_t* abort = nullptr;
  if (info.Length() >= 5 && !info[4].IsUndefined()) {
    void* wptr = nullptr;
    size_t wlen = 0;
    if (!typed(info[4], napi_int32_array, &wptr, &wlen) || wlen < 1) return status(kBadArguments);
    abort = static_cast<const int32_t*>(wptr);
  }
  // Dynamic chunks (a split whose lanes share work): `counter` (an Int32Array of at least one
  // element, shared by the lanes), the axis (0: M, 1: N) and the chunk size (an integer in
  // [1, 2^31)). All three or none.
  int32_t* counter = nullptr;
  int chunk_axis = 0;
  idx chunk_size = 0;
  if (info.Length() >= 6 && !info[5].IsUndefined()) {
    void* cptr = nullptr;
    size_t clen = 0;
    if (!typed(info[5], napi_int32_array, &cptr, &clen) || clen < 1 || info.Length() < 8 || !info[6].IsNumber() || !info[7].IsNumber()) {
      return status(kBadArguments);
    }
    const double axis = info[6].As<Napi::Number>().DoubleValue(), size = info[7].As<Napi::Number>().DoubleValue();
    if (!(axis == 0 || axis == 1) || !as_index(size, &chunk_size) || chunk_size < 1 || chunk_size > 0x7fffffff) return status(kBadArguments);
    counter = static_cast<int32_t*>(cptr);
    chunk_axis = static_cast<int>(axis);
  }
  // Read the descriptor once, into a copy nothing else can change (parse reads only its first
  // dlen words: not zeroed, 2 KiB per call).
  double desc[kDescMax];
  if (dlen > kDescMax) dlen = kDescMax;
  if (dlen > 0) std::memcpy(desc, dptr, dlen * sizeof(double));
  Request r;
  const int ps = parse(desc, dlen, &r);
  if (ps != kOk) return status(ps);
  const bool f32 = r.dtype == 0 || r.dtype == 2;
  const int lanes = r.dtype >= 2 ? 2 : 1;
  const napi_typedarray_type want = f32 ? napi_float32_array : napi_float64_array;
  void *pa = nullptr, *pb = nullptr, *pc = nullptr;
  size_t la = 0, lb = 0, lc = 0;
  if (!typed(info[1], want, &pa, &la) || !typed(info[2], want, &pb, &lb) || !typed(info[3], want, &pc, &lc)) return status(kBadArguments);
  if (extent_of(r, r.a, r.m, r.k, lanes, r.sa) > static_cast<__int128>(la) || extent_of(r, r.b, r.k, r.n, lanes, r.sb) > static_cast<__int128>(lb) ||
      extent_of(r, r.c, r.m, r.n, lanes) > static_cast<__int128>(lc)) {
    return status(kOutOfBounds);
  }
  if (r.m1 == r.m0 || r.n1 == r.n0 || r.b1 == r.b0) return status(kOk);

  if (counter == nullptr) return status(run_task(r, f32, lanes, pa, pb, pc, abort));
  // Dynamic chunks: claim chunk c = counter++ (the lanes of a split share the counter) until the
  // range is used up; each chunk is this task with its M or N range narrowed.
  const idx lo = chunk_axis == 0 ? r.m0 : r.n0, hi = chunk_axis == 0 ? r.m1 : r.n1;
  for (;;) {
    if (faer::abort_raised(abort)) return status(kAborted);
    const int32_t c = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    if (c < 0) break;
    const __int128 start = static_cast<__int128>(lo) + static_cast<__int128>(c) * chunk_size;
    if (start >= hi) break;
    const idx end = start + chunk_size < hi ? static_cast<idx>(start + chunk_size) : hi;
    Request sub = r;
    if (chunk_axis == 0) sub.m0 = static_cast<idx>(start), sub.m1 = end;
    else sub.n0 = static_cast<idx>(start), sub.n1 = end;
    const int st = run_task(sub, f32, lanes, pa, pb, pc, abort);
    if (st != kOk) return status(st);
  }
  return status(kOk);
}

}  // namespace js
}  // namespace faer
