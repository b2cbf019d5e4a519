// The BLIS-style GEMM engine, written once and compiled per ISA.
//
// Included by gemm_kernel_avx512.cc / _avx2.cc / _scalar.cc *after* their `#pragma GCC target`
// and inside their own namespace, which must first define:
//   template <class T> struct Vec   { using R = <register>; static constexpr int W; zero, load, store, set1, fma, mul };
//   template <class T> struct Shape { static constexpr int MV;  /* vectors along M */  static constexpr int NR; };
// The micro-kernel computes an MR x NR tile (MR = MV * W) from a packed A micro-panel
// (kc steps of MR contiguous values) and a packed B micro-panel (kc steps of NR values).
//
// Loop structure (Goto / BLIS): jc over N by NC (B block kc x nc packed, lives in L3),
// pc over K by KC, ic over M by MC (A block mc x kc packed, lives in L2), jr over the block by
// NR (B micro-panel in L1), ir by MR (micro-kernel). Packing absorbs any strides of A and B;
// C is written through its strides (vector path when C's rows are unit-stride and the tile is
// full). beta == 0 never reads C.
//
// Complex GEMM uses the 1M method (Van Zee & Smith): the complex product is a real GEMM with
// M' = 2m, K' = 2k, N' = n where A' expands each complex a into the 2x2 real block
// [ar -ai; ai ar] and B' splits b into (br, bi) along K'. It costs exactly the complex flop count
// and runs on the real micro-kernel; conjugation and alpha are fused into packing
// (B' = alpha * op(B)), beta is applied in a complex epilogue.
//
// This header must not include anything (the including file includes <immintrin.h> and the
// standard headers before its target pragma).

#ifndef FAER_ENGINE_NS
#error "include gemm_engine.h from an ISA translation unit"
#endif

template <class T>
struct Cfg {
  static constexpr int W = Vec<T>::W;
  static constexpr int MV = Shape<T>::MV;
  static constexpr int MR = MV * W;
  static constexpr int NR = Shape<T>::NR;
};

template <class T>
static inline T tmin(T a, T b) {
  return a < b ? a : b;
}

enum class StoreMode { Tmp, Overwrite, Update };

// ---------------------------------------------------------------------------------------------
// Micro-kernel: acc = A_panel * B_panel over kc; then
//   Tmp:       c[j*MR + i] = acc               (c is an MR x NR scratch tile)
//   Overwrite: C(i, j) = alpha * acc            (C rows unit-stride, column stride ldc)
//   Update:    C(i, j) = alpha * acc + beta * C(i, j)
template <class T>
static inline __attribute__((always_inline)) void ukernel(idx kc, const T* __restrict a, const T* __restrict b, T* __restrict c, idx ldc, T alpha,
                                                          T beta, StoreMode mode) {
  using V = Vec<T>;
  using R = typename V::R;
  constexpr int W = Cfg<T>::W, MV = Cfg<T>::MV, MR = Cfg<T>::MR, NR = Cfg<T>::NR;
  R acc[NR][MV];
#pragma GCC unroll 32
  for (int j = 0; j < NR; ++j) {
#pragma GCC unroll 8
    for (int v = 0; v < MV; ++v) acc[j][v] = V::zero();
  }
  if (mode != StoreMode::Tmp) {
#pragma GCC unroll 32
    for (int j = 0; j < NR; ++j) __builtin_prefetch(c + j * ldc, 1, 3);
  }
#pragma GCC unroll 4
  for (idx p = 0; p < kc; ++p) {
    R av[MV];
#pragma GCC unroll 8
    for (int v = 0; v < MV; ++v) av[v] = V::load(a + v * W);
    __builtin_prefetch(a + 8 * MR, 0, 3);
#pragma GCC unroll 32
    for (int j = 0; j < NR; ++j) {
      const R bj = V::set1(b[j]);
#pragma GCC unroll 8
      for (int v = 0; v < MV; ++v) acc[j][v] = V::fma(av[v], bj, acc[j][v]);
    }
    a += MR;
    b += NR;
  }
  if (mode == StoreMode::Tmp) {
#pragma GCC unroll 32
    for (int j = 0; j < NR; ++j) {
#pragma GCC unroll 8
      for (int v = 0; v < MV; ++v) V::store(c + j * MR + v * W, acc[j][v]);
    }
    return;
  }
  const R va = V::set1(alpha);
  if (mode == StoreMode::Overwrite) {
#pragma GCC unroll 32
    for (int j = 0; j < NR; ++j) {
#pragma GCC unroll 8
      for (int v = 0; v < MV; ++v) V::store(c + j * ldc + v * W, V::mul(va, acc[j][v]));
    }
    return;
  }
  const R vb = V::set1(beta);
#pragma GCC unroll 32
  for (int j = 0; j < NR; ++j) {
#pragma GCC unroll 8
    for (int v = 0; v < MV; ++v) {
      T* cp = c + j * ldc + v * W;
      V::store(cp, V::fma(va, acc[j][v], V::mul(vb, V::load(cp))));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Real packing. A: block of mc x kc starting at `A` -> micro-panels of MR rows (zero-padded).
template <class T>
static void pack_a_real(idx mc, idx kc, const T* A, idx rs, idx cs, T* __restrict dst) {
  constexpr int MR = Cfg<T>::MR;
  for (idx ir = 0; ir < mc; ir += MR) {
    const idx mr = tmin<idx>(MR, mc - ir);
    const T* a = A + ir * rs;
    if (rs == 1 && mr == MR) {
      for (idx p = 0; p < kc; ++p) {
        const T* s = a + p * cs;
#pragma GCC unroll 8
        for (int i = 0; i < MR; ++i) dst[i] = s[i];
        dst += MR;
      }
    } else if (cs == 1 && mr == MR) {
      // Row-major A: read each row contiguously, transpose into the panel.
      for (idx i = 0; i < MR; ++i) {
        const T* s = a + i * rs;
        for (idx p = 0; p < kc; ++p) dst[p * MR + i] = s[p];
      }
      dst += MR * kc;
    } else {
      for (idx p = 0; p < kc; ++p) {
        const T* s = a + p * cs;
        idx i = 0;
        for (; i < mr; ++i) dst[i] = s[i * rs];
        for (; i < MR; ++i) dst[i] = T(0);
        dst += MR;
      }
    }
  }
}

// B: block of kc x nc starting at `B` -> micro-panels of NR columns (zero-padded).
template <class T>
static void pack_b_real(idx kc, idx nc, const T* B, idx rs, idx cs, T* __restrict dst) {
  constexpr int NR = Cfg<T>::NR;
  for (idx jr = 0; jr < nc; jr += NR) {
    const idx nr = tmin<idx>(NR, nc - jr);
    const T* b = B + jr * cs;
    if (cs == 1 && nr == NR) {
      for (idx p = 0; p < kc; ++p) {
        const T* s = b + p * rs;
#pragma GCC unroll 32
        for (int j = 0; j < NR; ++j) dst[j] = s[j];
        dst += NR;
      }
    } else if (rs == 1 && nr == NR) {
      // Column-major B (the common case): NR contiguous column streams.
      const T* col[NR];
#pragma GCC unroll 32
      for (int j = 0; j < NR; ++j) col[j] = b + j * cs;
      for (idx p = 0; p < kc; ++p) {
#pragma GCC unroll 32
        for (int j = 0; j < NR; ++j) dst[j] = col[j][p];
        dst += NR;
      }
    } else {
      for (idx p = 0; p < kc; ++p) {
        const T* s = b + p * rs;
        idx j = 0;
        for (; j < nr; ++j) dst[j] = s[j * cs];
        for (; j < NR; ++j) dst[j] = T(0);
        dst += NR;
      }
    }
  }
}

// Gathered packing (GatherGemm): panels of W (MR rows of A, NR columns of B) over `count` rows or
// columns at element stride `stride`, K step p read at `X + koff[p]` (the table starts at the
// block's first step). Same panels as pack_a_real / pack_b_real.
template <class T, int W>
static void pack_gather(idx count, idx kc, const T* X, idx stride, const idx* koff, T* __restrict dst) {
  for (idx r0 = 0; r0 < count; r0 += W) {
    const idx w = tmin<idx>(W, count - r0);
    const T* x = X + r0 * stride;
    if (stride == 1 && w == W) {
      for (idx p = 0; p < kc; ++p) {
        const T* s = x + koff[p];
#pragma GCC unroll 32
        for (int i = 0; i < W; ++i) dst[i] = s[i];
        dst += W;
      }
    } else {
      for (idx p = 0; p < kc; ++p) {
        const T* s = x + koff[p];
        idx i = 0;
        for (; i < w; ++i) dst[i] = s[i * stride];
        for (; i < W; ++i) dst[i] = T(0);
        dst += W;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The blocked driver, generic over a policy that packs and stores.

/** The block size for `total` when blocks are at most about `block`: equal blocks, rounded up to `q`. */
static inline idx balanced_block(idx total, idx block, idx q) {
  if (total <= block) return total;
  const idx count = (total + block - 1) / block;
  const idx even = (total + count - 1) / count;
  return (even + q - 1) / q * q;
}
// The abort word is polled before each packed block of A (MC x KC) and before each NR-wide
// micro-panel of B within it (at most MC x KC x NR multiply-adds, a few tens of microseconds):
// an abort stops the GEMM within about that long, at a cost the benchmark does not show.
template <class T, class Policy>
static int drive(Policy& pol, idx M, idx N, idx K, const Blocking& bl, const std::int32_t* abort) {
  constexpr int MR = Cfg<T>::MR, NR = Cfg<T>::NR;
  // Balance the blocks: e.g. K = 1024 with KC = 336 runs 4 blocks of 256, not 3 x 336 + 16
  // (a 16-deep block would pay a full pass over C for almost no work). Rounded up to 8 (so
  // complex K blocks stay even), MR and NR.
  const idx MC = balanced_block(M, bl.mc, MR), KC = balanced_block(K, bl.kc, 8), NC = balanced_block(N, bl.nc, NR);
  const idx kcmax = tmin(K, KC);
  const idx ncmax = (tmin(N, NC) + NR - 1) / NR * NR;
  const idx mcmax = (tmin(M, MC) + MR - 1) / MR * MR;
  T* pa = static_cast<T*>(scratch(0, static_cast<std::size_t>(mcmax * kcmax) * sizeof(T)));
  T* pb = static_cast<T*>(scratch(1, static_cast<std::size_t>(ncmax * kcmax) * sizeof(T)));
  if (pa == nullptr || pb == nullptr) return kEngineNoMemory;
  alignas(64) T tmp[MR * NR];
  for (idx jc = 0; jc < N; jc += NC) {
    const idx nc = tmin(NC, N - jc);
    for (idx pc = 0; pc < K; pc += KC) {
      const idx kc = tmin(KC, K - pc);
      const bool first = pc == 0;
      pol.pack_b(pc, jc, kc, nc, pb);
      for (idx ic = 0; ic < M; ic += MC) {
        const idx mc = tmin(MC, M - ic);
        if (abort_raised(abort)) return kEngineAborted;
        pol.pack_a(ic, pc, mc, kc, pa);
        for (idx jr = 0; jr < nc; jr += NR) {
          if (abort_raised(abort)) return kEngineAborted;
          const idx nr = tmin<idx>(NR, nc - jr);
          const T* bp = pb + jr * kc;
          for (idx ir = 0; ir < mc; ir += MR) {
            const idx mr = tmin<idx>(MR, mc - ir);
            pol.tile(ic + ir, jc + jr, mr, nr, kc, pa + ir * kc, bp, first, tmp);
          }
        }
      }
    }
  }
  return kEngineDone;
}

// One register tile of a real product `g` (RealGemm or GatherGemm): rows [i, i+mr) and columns
// [j, j+nr) of C from packed panels over kc steps; `first`: the first K block (beta applies).
template <class T, class G>
static inline void real_tile(const G& g, idx i, idx j, idx mr, idx nr, idx kc, const T* a, const T* b, bool first, T* tmp) {
  constexpr int MR = Cfg<T>::MR, NR = Cfg<T>::NR;
  T* c = g.c + i * g.rsc + j * g.csc;
  const bool overwrite = first && g.beta == T(0);
  const T beta = first ? g.beta : T(1);
  if (g.rsc == 1 && mr == MR && nr == NR) {
    ukernel<T>(kc, a, b, c, g.csc, g.alpha, beta, overwrite ? StoreMode::Overwrite : StoreMode::Update);
    return;
  }
  ukernel<T>(kc, a, b, tmp, MR, T(0), T(0), StoreMode::Tmp);
  for (idx jj = 0; jj < nr; ++jj) {
    for (idx ii = 0; ii < mr; ++ii) {
      T* cp = c + ii * g.rsc + jj * g.csc;
      const T v = g.alpha * tmp[jj * MR + ii];
      *cp = overwrite ? v : v + beta * *cp;
    }
  }
}

template <class T>
struct RealPolicy {
  const RealGemm<T>& g;
  void pack_a(idx ic, idx pc, idx mc, idx kc, T* dst) const { pack_a_real<T>(mc, kc, g.a + ic * g.rsa + pc * g.csa, g.rsa, g.csa, dst); }
  void pack_b(idx pc, idx jc, idx kc, idx nc, T* dst) const { pack_b_real<T>(kc, nc, g.b + pc * g.rsb + jc * g.csb, g.rsb, g.csb, dst); }
  void tile(idx i, idx j, idx mr, idx nr, idx kc, const T* a, const T* b, bool first, T* tmp) const { real_tile<T>(g, i, j, mr, nr, kc, a, b, first, tmp); }
};

// A GatherGemm's operands: through its tables, or (null table) its affine K stride like RealPolicy.
template <class T>
struct GatherPolicy {
  const GatherGemm<T>& g;
  void pack_a(idx ic, idx pc, idx mc, idx kc, T* dst) const {
    if (g.ka == nullptr) return pack_a_real<T>(mc, kc, g.a + ic * g.rsa + pc * g.csa, g.rsa, g.csa, dst);
    pack_gather<T, Cfg<T>::MR>(mc, kc, g.a + ic * g.rsa, g.rsa, g.ka + pc, dst);
  }
  void pack_b(idx pc, idx jc, idx kc, idx nc, T* dst) const {
    if (g.kb == nullptr) return pack_b_real<T>(kc, nc, g.b + pc * g.rsb + jc * g.csb, g.rsb, g.csb, dst);
    pack_gather<T, Cfg<T>::NR>(nc, kc, g.b + jc * g.csb, g.csb, g.kb + pc, dst);
  }
  void tile(idx i, idx j, idx mr, idx nr, idx kc, const T* a, const T* b, bool first, T* tmp) const { real_tile<T>(g, i, j, mr, nr, kc, a, b, first, tmp); }
};

template <class T>
struct ComplexPolicy {
  const ComplexGemm<T>& g;
  // Real rows [ic, ic+mc) and real K [pc, pc+kc) of A' (both even).
  void pack_a(idx ic, idx pc, idx mc, idx kc, T* __restrict dst) const {
    constexpr int MR = Cfg<T>::MR, MRC = MR / 2;
    const idx rs = 2 * g.rsa, cs = 2 * g.csa;
    const T* A = g.a + (ic / 2) * rs + (pc / 2) * cs;
    const T s = g.conj_a ? T(-1) : T(1);
    const idx mcc = mc / 2, kcc = kc / 2;
    for (idx ir = 0; ir < mcc; ir += MRC) {
      const idx mr = tmin<idx>(MRC, mcc - ir);
      const T* a = A + ir * rs;
      for (idx p = 0; p < kcc; ++p) {
        T* d0 = dst;
        T* d1 = dst + MR;
        const T* ap = a + p * cs;
        if (rs == 2 && mr == MRC) {
#pragma GCC unroll 4
          for (int i = 0; i < MRC; ++i) {
            const T re = ap[2 * i], im = s * ap[2 * i + 1];
            d0[2 * i] = re;
            d0[2 * i + 1] = im;
            d1[2 * i] = -im;
            d1[2 * i + 1] = re;
          }
        } else {
          idx i = 0;
          for (; i < mr; ++i) {
            const T re = ap[i * rs], im = s * ap[i * rs + 1];
            d0[2 * i] = re;
            d0[2 * i + 1] = im;
            d1[2 * i] = -im;
            d1[2 * i + 1] = re;
          }
          for (; i < MRC; ++i) d0[2 * i] = d0[2 * i + 1] = d1[2 * i] = d1[2 * i + 1] = T(0);
        }
        dst += 2 * MR;
      }
    }
  }
  // Real K [pc, pc+kc) (even) and columns [jc, jc+nc) of B' = alpha * op(B).
  void pack_b(idx pc, idx jc, idx kc, idx nc, T* __restrict dst) const {
    constexpr int NR = Cfg<T>::NR;
    const idx rs = 2 * g.rsb, cs = 2 * g.csb;
    const T* B = g.b + (pc / 2) * rs + jc * cs;
    const T s = g.conj_b ? T(-1) : T(1);
    const T ar = g.alpha_re, ai = g.alpha_im;
    const idx kcc = kc / 2;
    for (idx jr = 0; jr < nc; jr += NR) {
      const idx nr = tmin<idx>(NR, nc - jr);
      const T* b = B + jr * cs;
      for (idx p = 0; p < kcc; ++p) {
        T* d0 = dst;
        T* d1 = dst + NR;
        const T* bp = b + p * rs;
        idx j = 0;
        for (; j < nr; ++j) {
          const T br = bp[j * cs], bi = s * bp[j * cs + 1];
          d0[j] = ar * br - ai * bi;
          d1[j] = ar * bi + ai * br;
        }
        for (; j < NR; ++j) d0[j] = d1[j] = T(0);
        dst += 2 * NR;
      }
    }
  }
  void tile(idx i, idx j, idx mr, idx nr, idx kc, const T* a, const T* b, bool first, T* tmp) const {
    constexpr int MR = Cfg<T>::MR;
    ukernel<T>(kc, a, b, tmp, MR, T(0), T(0), StoreMode::Tmp);
    const idx mrc = mr / 2;
    T* c = g.c + 2 * ((i / 2) * g.rsc + j * g.csc);
    const idx rs = 2 * g.rsc, cs = 2 * g.csc;
    const T br = g.beta_re, bi = g.beta_im;
    const bool overwrite = first && br == T(0) && bi == T(0);
    for (idx jj = 0; jj < nr; ++jj) {
      for (idx ii = 0; ii < mrc; ++ii) {
        T* cp = c + ii * rs + jj * cs;
        const T tr = tmp[jj * MR + 2 * ii], ti = tmp[jj * MR + 2 * ii + 1];
        if (overwrite) {
          cp[0] = tr;
          cp[1] = ti;
        } else if (first) {
          const T cr = cp[0], ci = cp[1];
          cp[0] = tr + (br * cr - bi * ci);
          cp[1] = ti + (br * ci + bi * cr);
        } else {
          cp[0] += tr;
          cp[1] += ti;
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Direct (unpacked) paths for small problems.
// The direct paths poll the abort word per column chunk and every kPollK steps along K (at most
// 128 x 2^14 multiply-adds between polls), so a thin GEMM with a huge K stops early too.
constexpr idx kPollK = idx{1} << 14;
// Products (m·n·k) up to which the axpy-style direct loop below beats packing when A has no
// unit row stride in either orientation (bench/tune-small.mjs).
constexpr double kSmallStrided = 20.0 * 20 * 20;
// The same for the scalar complex direct loop.
constexpr double kSmallComplexStrided = 10.0 * 10 * 10;

// Prefetching the next item of a batch of small GEMMs: a batch that does not fit in the caches
// streams each item's A, B and C from memory, and the small kernel would wait for every line of
// them. While one item computes, each K step of its tiles touches two more lines of the next
// item's operands (their dense spans, see batch_real), so those arrive before they are needed.
// Prefetches never fault; a cursor that has run out costs one compare per K step.
struct Prefetch {
  const char* p = nullptr;  // the current span: [p, e)
  const char* e = nullptr;
  int next = 0, count = 0;
  bool wide = false;  // four lines per K step instead of two (an item with few K steps per line)
  const char* lo[3] = {nullptr, nullptr, nullptr};
  const char* hi[3] = {nullptr, nullptr, nullptr};
  // At the start of a tile: move on to the next span once the current one is used up.
  inline __attribute__((always_inline)) void refill() {
    if (p >= e && next < count) {
      p = lo[next];
      e = hi[next];
      ++next;
    }
  }
};

// The small-matrix kernel (no packing): C in register tiles of MV vectors (rows) x NJ columns
// computed straight from the operands — A column-major (unit row stride, any column stride): each
// K step loads MV vectors of one column of A (the last one masked when the tile has fewer rows),
// and broadcasts NJ entries of B (any strides) — the accumulators stay in registers for the whole
// K loop and C is written once (vector stores, masked on the last vector, when C's rows are
// unit-stride; lane by lane otherwise). The tile is the packed micro-kernel's (MV x NR), so the
// same registers hold it. Packing costs a pass over A and B that a product this small never earns
// back; a masked lane is neither read nor written. The row panels of C are the outer loop (a
// panel of A — MR x K — stays in L1 while the columns of B stream past it).
template <class T, int MV, int NJ, bool TAIL, bool PF>
static inline __attribute__((always_inline)) void small_tile(const RealGemm<T>& g, const T* __restrict a, const T* __restrict b, T* c,
                                                             typename Vec<T>::M tail, int last, bool overwrite, Prefetch& pf) {
  using V = Vec<T>;
  using R = typename V::R;
  constexpr int W = V::W;
  R acc[NJ][MV];
#pragma GCC unroll 8
  for (int jj = 0; jj < NJ; ++jj) {
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) acc[jj][v] = V::zero();
  }
  const idx csa = g.csa, rsb = g.rsb, csb = g.csb;
  // The prefetch cursor lives in registers over the K loop (a span ends at most a tile late).
  if constexpr (PF) pf.refill();
  const char* pp = pf.p;
  const char* const pe = pf.e;
  const idx pstep = pf.wide ? 256 : 128;
#pragma GCC unroll 2
  for (idx p = 0; p < g.k; ++p) {
    R av[MV];
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) av[v] = TAIL && v == MV - 1 ? V::load_m(a + v * W, tail) : V::load(a + v * W);
#pragma GCC unroll 8
    for (int jj = 0; jj < NJ; ++jj) {
      const R bv = V::set1(b[jj * csb]);
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) acc[jj][v] = V::fma(av[v], bv, acc[jj][v]);
    }
    if (PF && pp < pe) {
      __builtin_prefetch(pp, 0, 3);
      __builtin_prefetch(pp + 64, 0, 3);
      if (pstep == 256) {
        __builtin_prefetch(pp + 128, 0, 3);
        __builtin_prefetch(pp + 192, 0, 3);
      }
      pp += pstep;
    }
    a += csa;
    b += rsb;
  }
  if constexpr (PF) pf.p = pp;
  const R va = V::set1(g.alpha);
  const R vb = V::set1(g.beta);
#pragma GCC unroll 8
  for (int jj = 0; jj < NJ; ++jj) {
    T* cj = c + jj * g.csc;
    if (g.rsc == 1) {
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) {
        R out = V::mul(va, acc[jj][v]);
        if (TAIL && v == MV - 1) {
          if (!overwrite) out = V::fma(vb, V::load_m(cj + v * W, tail), out);
          V::store_m(cj + v * W, out, tail);
        } else {
          if (!overwrite) out = V::fma(vb, V::load(cj + v * W), out);
          V::store(cj + v * W, out);
        }
      }
    } else {
      // Through a buffer (acc is only ever indexed by unrolled constants, so it stays in registers).
      alignas(64) T lanes[MV * W];
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) V::store(lanes + v * W, V::mul(va, acc[jj][v]));
      const int count = (MV - 1) * W + (TAIL ? last : W);
      for (int l = 0; l < count; ++l) {
        T* cp = cj + l * g.rsc;
        *cp = overwrite ? lanes[l] : lanes[l] + g.beta * *cp;
      }
    }
  }
}

// The last `rest` (< NR) columns of a row panel: the tile of exactly that width.
template <class T, int MV, bool TAIL, bool PF, int NJ>
static inline __attribute__((always_inline)) void small_last_columns(const RealGemm<T>& g, idx rest, const T* a, const T* b, T* c,
                                                                     typename Vec<T>::M tail, int last, bool overwrite, Prefetch& pf) {
  if constexpr (NJ >= 1) {
    if (rest == NJ) return small_tile<T, MV, NJ, TAIL, PF>(g, a, b, c, tail, last, overwrite, pf);
    small_last_columns<T, MV, TAIL, PF, NJ - 1>(g, rest, a, b, c, tail, last, overwrite, pf);
  }
}

// Columns per tile for a panel of MV vectors: the micro-kernel's NR for a full panel; narrower
// panels (the last rows, or all of a tiny GEMM such as 8 x 8) take up to 8 columns while
// MV·NJ accumulators + MV A vectors + 1 broadcast fit the register file — more independent FMA
// chains (an 8 x 8 x 8 product is one 8-wide tile: 8 chains, not 6 + 2).
template <class T, int MV>
struct SmallCols {
  static constexpr int kRegs = sizeof(typename Vec<T>::R) == 64 ? 32 : 16;
  static constexpr int kFit = (kRegs - MV - 1) / MV;
  static constexpr int value = MV == Cfg<T>::MV ? Cfg<T>::NR : kFit > 8 ? 8 : kFit < Cfg<T>::NR ? Cfg<T>::NR : kFit;
};

// One row panel of C (MV vectors of rows starting at row i) across all columns.
template <class T, int MV, bool TAIL, bool PF>
static void small_row_panel(const RealGemm<T>& g, idx i, typename Vec<T>::M tail, int last, bool overwrite, Prefetch& pf) {
  constexpr int NR = SmallCols<T, MV>::value;
  const T* a = g.a + i;  // rsa == 1
  T* c = g.c + i * g.rsc;
  idx j = 0;
  for (; j + NR <= g.n; j += NR) small_tile<T, MV, NR, TAIL, PF>(g, a, g.b + j * g.csb, c + j * g.csc, tail, last, overwrite, pf);
  if (j < g.n) small_last_columns<T, MV, TAIL, PF, NR - 1>(g, g.n - j, a, g.b + j * g.csb, c + j * g.csc, tail, last, overwrite, pf);
}

// The last rows (fewer than MR): `nv` vectors, the last one holding `last` rows.
template <class T, bool PF, int NV>
static void small_last_rows(const RealGemm<T>& g, idx i, int nv, int last, bool overwrite, Prefetch& pf) {
  using V = Vec<T>;
  if constexpr (NV >= 1) {
    if (nv == NV) {
      if (last == V::W) return small_row_panel<T, NV, false, PF>(g, i, V::mask(V::W), last, overwrite, pf);
      return small_row_panel<T, NV, true, PF>(g, i, V::mask(last), last, overwrite, pf);
    }
    small_last_rows<T, PF, NV - 1>(g, i, nv, last, overwrite, pf);
  }
}

// The abort word is polled before each row panel (MR x n x k multiply-adds; the small path only
// takes products of at most `Blocking::small` multiply-adds with K at most kPollK).
template <class T, bool PF>
static int small_real(const RealGemm<T>& g, Prefetch& pf) {
  using V = Vec<T>;
  constexpr int W = V::W, MV = Cfg<T>::MV, MR = Cfg<T>::MR;
  const bool overwrite = g.beta == T(0);
  idx i = 0;
  for (; i + MR <= g.m; i += MR) {
    if (abort_raised(g.abort)) return kEngineAborted;
    small_row_panel<T, MV, false, PF>(g, i, V::mask(W), W, overwrite, pf);
  }
  if (i < g.m) {
    if (abort_raised(g.abort)) return kEngineAborted;
    const idx rest = g.m - i;
    const int nv = static_cast<int>((rest + W - 1) / W);
    small_last_rows<T, PF, MV>(g, i, nv, static_cast<int>(rest - static_cast<idx>(nv - 1) * W), overwrite, pf);
  }
  return kEngineDone;
}

template <class T>
static int small_real(const RealGemm<T>& g) {
  Prefetch none;
  return small_real<T, false>(g, none);
}

template <class T>
static int direct_real(const RealGemm<T>& g) {
  constexpr idx CH = 128;
  alignas(64) T acc[CH];
  const bool overwrite = g.beta == T(0);
  for (idx j = 0; j < g.n; ++j) {
    const T* bcol = g.b + j * g.csb;
    for (idx i0 = 0; i0 < g.m; i0 += CH) {
      const idx mi = tmin(CH, g.m - i0);
      for (idx i = 0; i < mi; ++i) acc[i] = T(0);
      const T* a0 = g.a + i0 * g.rsa;
      for (idx p0 = 0; p0 < g.k; p0 += kPollK) {
        if (abort_raised(g.abort)) return kEngineAborted;
        const idx p1 = tmin(g.k, p0 + kPollK);
        if (g.rsa == 1) {
          for (idx p = p0; p < p1; ++p) {
            const T bv = bcol[p * g.rsb];
            const T* __restrict ap = a0 + p * g.csa;
            for (idx i = 0; i < mi; ++i) acc[i] += ap[i] * bv;
          }
        } else {
          for (idx p = p0; p < p1; ++p) {
            const T bv = bcol[p * g.rsb];
            const T* ap = a0 + p * g.csa;
            for (idx i = 0; i < mi; ++i) acc[i] += ap[i * g.rsa] * bv;
          }
        }
      }
      T* c = g.c + i0 * g.rsc + j * g.csc;
      for (idx i = 0; i < mi; ++i) {
        T* cp = c + i * g.rsc;
        const T v = g.alpha * acc[i];
        *cp = overwrite ? v : v + g.beta * *cp;
      }
    }
  }
  return kEngineDone;
}

// The complex small-matrix kernel (vector ISAs only: a complex takes two lanes). A column-major in
// complex elements (its interleaved (re, im) pairs contiguous down a column), B and C any strides.
// A tile of MV vectors (W/2 complex rows each) by NJ columns keeps two accumulators per vector:
// sum a·re(b) and sum a·im(b) (conj(B) negates im(b) at the broadcast); the epilogue forms the
// complex products with one pair swap — x = accR + swap(accI)·(−1, 1) (conj(A):
// x = accR·(1, −1) + swap(accI)) — then alpha·x + beta·C the same way.
template <class T>
struct ComplexSmallShape {
  static constexpr int kRegs = sizeof(typename Vec<T>::R) == 64 ? 32 : 16;
  // 2·MV·NJ accumulators + MV A vectors + 1 broadcast.
  static constexpr int MV = kRegs == 32 ? 2 : 2;
  static constexpr int NJ = kRegs == 32 ? 6 : 3;
};

template <class T>
static inline __attribute__((always_inline)) typename Vec<T>::R alternating(T even, T odd) {
  alignas(64) T v[Vec<T>::W];
  for (int l = 0; l < Vec<T>::W; ++l) v[l] = l % 2 == 0 ? even : odd;
  return Vec<T>::load(v);
}

template <class T, int MV, int NJ, bool TAIL>
static inline __attribute__((always_inline)) void csmall_tile(const ComplexGemm<T>& g, const T* __restrict a, const T* __restrict b, T* c,
                                                              typename Vec<T>::M tail, int last, bool overwrite) {
  using V = Vec<T>;
  using R = typename V::R;
  constexpr int W = V::W;
  R accr[NJ][MV], acci[NJ][MV];
#pragma GCC unroll 8
  for (int jj = 0; jj < NJ; ++jj) {
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) accr[jj][v] = acci[jj][v] = V::zero();
  }
  const idx csa = 2 * g.csa, rsb = 2 * g.rsb, csb = 2 * g.csb;
  const T sb = g.conj_b ? T(-1) : T(1);
#pragma GCC unroll 2
  for (idx p = 0; p < g.k; ++p) {
    R av[MV];
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) av[v] = TAIL && v == MV - 1 ? V::load_m(a + v * W, tail) : V::load(a + v * W);
#pragma GCC unroll 8
    for (int jj = 0; jj < NJ; ++jj) {
      const R br = V::set1(b[jj * csb]);
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) accr[jj][v] = V::fma(av[v], br, accr[jj][v]);
      const R bi = V::set1(sb * b[jj * csb + 1]);
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) acci[jj][v] = V::fma(av[v], bi, acci[jj][v]);
    }
    a += csa;
    b += rsb;
  }
  const R neg_even = alternating<T>(T(-1), T(1)), neg_odd = alternating<T>(T(1), T(-1));
  const R ar = V::set1(g.alpha_re), ai = alternating<T>(-g.alpha_im, g.alpha_im);
  const R br = V::set1(g.beta_re), bi = alternating<T>(-g.beta_im, g.beta_im);
  const idx rsc = 2 * g.rsc;
#pragma GCC unroll 8
  for (int jj = 0; jj < NJ; ++jj) {
    T* cj = c + jj * 2 * g.csc;
    R out[MV];
#pragma GCC unroll 4
    for (int v = 0; v < MV; ++v) {
      const R y = V::swap_pairs(acci[jj][v]);
      const R x = g.conj_a ? V::fma(accr[jj][v], neg_odd, y) : V::fma(y, neg_even, accr[jj][v]);
      out[v] = V::fma(V::swap_pairs(x), ai, V::mul(x, ar));
    }
    if (rsc == 2) {
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) {
        R o = out[v];
        if (TAIL && v == MV - 1) {
          if (!overwrite) {
            const R cv = V::load_m(cj + v * W, tail);
            o = V::fma(V::swap_pairs(cv), bi, V::fma(cv, br, o));
          }
          V::store_m(cj + v * W, o, tail);
        } else {
          if (!overwrite) {
            const R cv = V::load(cj + v * W);
            o = V::fma(V::swap_pairs(cv), bi, V::fma(cv, br, o));
          }
          V::store(cj + v * W, o);
        }
      }
    } else {
      alignas(64) T lanes[MV * W];
#pragma GCC unroll 4
      for (int v = 0; v < MV; ++v) V::store(lanes + v * W, out[v]);
      const int count = ((MV - 1) * W + (TAIL ? last : W)) / 2;
      for (int l = 0; l < count; ++l) {
        T* cp = cj + l * rsc;
        T vr = lanes[2 * l], vi = lanes[2 * l + 1];
        if (!overwrite) {
          const T cr = cp[0], ci = cp[1];
          vr += g.beta_re * cr - g.beta_im * ci;
          vi += g.beta_re * ci + g.beta_im * cr;
        }
        cp[0] = vr;
        cp[1] = vi;
      }
    }
  }
}

template <class T, int MV, bool TAIL, int NJ>
static inline __attribute__((always_inline)) void csmall_last_columns(const ComplexGemm<T>& g, idx rest, const T* a, const T* b, T* c,
                                                                      typename Vec<T>::M tail, int last, bool overwrite) {
  if constexpr (NJ >= 1) {
    if (rest == NJ) return csmall_tile<T, MV, NJ, TAIL>(g, a, b, c, tail, last, overwrite);
    csmall_last_columns<T, MV, TAIL, NJ - 1>(g, rest, a, b, c, tail, last, overwrite);
  }
}

template <class T, int MV, bool TAIL>
static void csmall_row_panel(const ComplexGemm<T>& g, idx i, typename Vec<T>::M tail, int last, bool overwrite) {
  constexpr int NJ = ComplexSmallShape<T>::NJ;
  const T* a = g.a + 2 * i;  // rsa == 1
  T* c = g.c + 2 * i * g.rsc;
  const idx csb = 2 * g.csb, csc = 2 * g.csc;
  idx j = 0;
  for (; j + NJ <= g.n; j += NJ) csmall_tile<T, MV, NJ, TAIL>(g, a, g.b + j * csb, c + j * csc, tail, last, overwrite);
  if (j < g.n) csmall_last_columns<T, MV, TAIL, NJ - 1>(g, g.n - j, a, g.b + j * csb, c + j * csc, tail, last, overwrite);
}

// `nv` vectors of rows, the last holding `last` real lanes (an even count).
template <class T, int NV>
static void csmall_last_rows(const ComplexGemm<T>& g, idx i, int nv, int last, bool overwrite) {
  using V = Vec<T>;
  if constexpr (NV >= 1) {
    if (nv == NV) {
      if (last == V::W) return csmall_row_panel<T, NV, false>(g, i, V::mask(V::W), last, overwrite);
      return csmall_row_panel<T, NV, true>(g, i, V::mask(last), last, overwrite);
    }
    csmall_last_rows<T, NV - 1>(g, i, nv, last, overwrite);
  }
}

// Polls the abort word before each row panel, like small_real.
template <class T>
static int small_complex(const ComplexGemm<T>& g) {
  using V = Vec<T>;
  constexpr int W = V::W, MV = ComplexSmallShape<T>::MV, CR = MV * W / 2;  // complex rows per panel
  static_assert(W >= 2, "the complex small kernel needs two lanes per complex");
  const bool overwrite = g.beta_re == T(0) && g.beta_im == T(0);
  idx i = 0;
  for (; i + CR <= g.m; i += CR) {
    if (abort_raised(g.abort)) return kEngineAborted;
    csmall_row_panel<T, MV, false>(g, i, V::mask(W), W, overwrite);
  }
  if (i < g.m) {
    if (abort_raised(g.abort)) return kEngineAborted;
    const idx lanes = 2 * (g.m - i);
    const int nv = static_cast<int>((lanes + W - 1) / W);
    csmall_last_rows<T, MV>(g, i, nv, static_cast<int>(lanes - static_cast<idx>(nv - 1) * W), overwrite);
  }
  return kEngineDone;
}

template <class T>
static int direct_complex(const ComplexGemm<T>& g) {
  constexpr idx CH = 64;
  alignas(64) T acc[2 * CH];
  const idx rsa = 2 * g.rsa, csa = 2 * g.csa, rsb = 2 * g.rsb, csb = 2 * g.csb, rsc = 2 * g.rsc, csc = 2 * g.csc;
  const T sa = g.conj_a ? T(-1) : T(1), sb = g.conj_b ? T(-1) : T(1);
  const bool overwrite = g.beta_re == T(0) && g.beta_im == T(0);
  for (idx j = 0; j < g.n; ++j) {
    const T* bcol = g.b + j * csb;
    for (idx i0 = 0; i0 < g.m; i0 += CH) {
      const idx mi = tmin(CH, g.m - i0);
      for (idx i = 0; i < 2 * mi; ++i) acc[i] = T(0);
      const T* a0 = g.a + i0 * rsa;
      for (idx p0 = 0; p0 < g.k; p0 += kPollK) {
        if (abort_raised(g.abort)) return kEngineAborted;
        const idx p1 = tmin(g.k, p0 + kPollK);
        for (idx p = p0; p < p1; ++p) {
          const T br = bcol[p * rsb], bi = sb * bcol[p * rsb + 1];
          const T* ap = a0 + p * csa;
          for (idx i = 0; i < mi; ++i) {
            const T ar = ap[i * rsa], ai = sa * ap[i * rsa + 1];
            acc[2 * i] += ar * br - ai * bi;
            acc[2 * i + 1] += ar * bi + ai * br;
          }
        }
      }
      T* c = g.c + i0 * rsc + j * csc;
      for (idx i = 0; i < mi; ++i) {
        T* cp = c + i * rsc;
        const T xr = acc[2 * i], xi = acc[2 * i + 1];
        T vr = g.alpha_re * xr - g.alpha_im * xi;
        T vi = g.alpha_re * xi + g.alpha_im * xr;
        if (!overwrite) {
          const T cr = cp[0], ci = cp[1];
          vr += g.beta_re * cr - g.beta_im * ci;
          vi += g.beta_re * ci + g.beta_im * cr;
        }
        cp[0] = vr;
        cp[1] = vi;
      }
    }
  }
  return kEngineDone;
}

// ---------------------------------------------------------------------------------------------
// Entry points.
// C^T = B^T A^T: the same product with the operands exchanged and C's strides swapped.
template <class G>
static G transposed(const G& g) {
  G t = g;
  t.m = g.n;
  t.n = g.m;
  t.a = g.b;
  t.rsa = g.csb;
  t.csa = g.rsb;
  t.b = g.a;
  t.rsb = g.csa;
  t.csb = g.rsa;
  t.rsc = g.csc;
  t.csc = g.rsc;
  return t;
}

// Whether the small kernel's streamed operand (B, k x n in the orientation it runs) stays in L2
// (Blocking::small_stream_bytes): it is read once per row panel of C.
template <class T>
static inline bool small_streams_fit(idx k, idx n, const Blocking& bl) {
  return static_cast<double>(k) * static_cast<double>(n) * static_cast<double>(sizeof(T)) <= bl.small_stream_bytes;
}

// Whether `lines` cache lines at a stride of `stride` elements of T can all sit in L1 at once:
// an x86 L1d has 64 sets of 64-byte lines (4 KiB per way) and at least 8 ways, and lines whose
// stride is a multiple of 64 bytes fall into only 64 / gcd(stride / 64, 64) of the sets. The small
// kernel keeps a panel of A (one line per K step, at A's column stride) in L1 and reads B one row
// per K step (at B's row stride when its columns are unit-stride): at a power-of-two stride of
// 4 KiB or more (a summed contraction's items, d = 64: 32 KiB) they all map to one set, and the
// panel is evicted at every step (f64 C[i,l] = Σ A[i,j,k]·B[k,j,l], d = 64: 2.96 ms summed vs
// 1.90 ms copied on a Zen 3).
template <class T>
static inline bool lines_fit_l1(idx lines, idx stride) {
  constexpr idx kSets = 64, kWays = 8, kLine = 64;
  const idx bytes = (stride < 0 ? -stride : stride) * static_cast<idx>(sizeof(T));
  if (bytes % kLine != 0) return true;  // consecutive lines spread over the sets
  idx a = (bytes / kLine) % kSets, b = kSets;
  while (a != 0) {
    const idx t = b % a;
    b = a;
    a = t;
  }
  return lines <= kSets / b * kWays;  // b = gcd(bytes / 64, 64), 64 when a multiple of 4 KiB
}

// The small kernel's operand access pattern (A column-major in `g`) stays in L1: see lines_fit_l1.
template <class T>
static inline bool small_lines_fit(const RealGemm<T>& g) {
  return lines_fit_l1<T>(g.k, g.csa) && (g.rsb == 1 || lines_fit_l1<T>(g.k, g.rsb));
}

template <class T>
static int run_real(RealGemm<T> g, const Blocking& bl) {
  if (g.m <= 0 || g.n <= 0) return kEngineDone;
  if (g.k <= 0) {
    for (idx j = 0; j < g.n; ++j) {
      if (abort_raised(g.abort)) return kEngineAborted;
      for (idx i = 0; i < g.m; ++i) {
        T* cp = g.c + i * g.rsc + j * g.csc;
        *cp = g.beta == T(0) ? T(0) : g.beta * *cp;
      }
    }
    return kEngineDone;
  }
  // Put C's unit stride (if any) along M: C^T = B^T A^T.
  if (g.rsc != 1 && g.csc == 1) g = transposed(g);
  const double work = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  // Small products run unpacked when one of the two orientations has a column-major A (C's
  // strides are free): Cᵀ = Bᵀ·Aᵀ turns a row-major B into a column-major A.
  if (work <= bl.small && g.k <= kPollK) {
    if (g.rsa == 1 && small_streams_fit<T>(g.k, g.n, bl) && small_lines_fit<T>(g)) return small_real<T>(g);
    if (g.csb == 1 && small_streams_fit<T>(g.k, g.m, bl) && small_lines_fit<T>(transposed(g))) return small_real<T>(transposed(g));
  }
  if (work <= kSmallStrided || g.m < 4 || g.n < 2) return direct_real<T>(g);
  RealPolicy<T> pol{g};
  return drive<T>(pol, g.m, g.n, g.k, bl, g.abort);
}

// The K offset of step p of a GatherGemm operand: through its table, else the affine stride.
static inline idx gather_k(const idx* table, idx stride, idx p) { return table != nullptr ? table[p] : p * stride; }

// A GatherGemm too thin to pack (m < 4 or n < 2): dot products over the gathered K, summed in
// blocks of kPollK steps between abort polls.
template <class T>
static int direct_gather(const GatherGemm<T>& g) {
  for (idx j = 0; j < g.n; ++j) {
    for (idx i = 0; i < g.m; ++i) {
      const T* a = g.a + i * g.rsa;
      const T* b = g.b + j * g.csb;
      T acc = T(0);
      for (idx p0 = 0; p0 < g.k; p0 += kPollK) {
        if (abort_raised(g.abort)) return kEngineAborted;
        const idx p1 = tmin(g.k, p0 + kPollK);
        for (idx p = p0; p < p1; ++p) acc += a[gather_k(g.ka, g.csa, p)] * b[gather_k(g.kb, g.rsb, p)];
      }
      T* cp = g.c + i * g.rsc + j * g.csc;
      *cp = g.beta == T(0) ? g.alpha * acc : g.alpha * acc + g.beta * *cp;
    }
  }
  return kEngineDone;
}

// Cᵀ = Bᵀ·Aᵀ of a GatherGemm: the operands swap, each keeping its K table.
template <class T>
static GatherGemm<T> transposed_gather(const GatherGemm<T>& g) {
  GatherGemm<T> t = g;
  t.m = g.n, t.n = g.m;
  t.a = g.b, t.rsa = g.csb, t.csa = g.rsb, t.ka = g.kb;
  t.b = g.a, t.rsb = g.csa, t.csb = g.rsa, t.kb = g.ka;
  t.rsc = g.csc, t.csc = g.rsc;
  return t;
}

template <class T>
static int run_gather(GatherGemm<T> g, const Blocking& bl) {
  if (g.m <= 0 || g.n <= 0 || g.k <= 0) return kEngineDone;  // gemm.cc sends k = 0 to run_real
  // Put C's unit stride (if any) along M, as run_real does.
  if (g.rsc != 1 && g.csc == 1) g = transposed_gather(g);
  if (g.m < 4 || g.n < 2) return direct_gather<T>(g);
  GatherPolicy<T> pol{g};
  return drive<T>(pol, g.m, g.n, g.k, bl, g.abort);
}

template <class T>
static int run_complex(ComplexGemm<T> g, const Blocking& bl) {
  if (g.m <= 0 || g.n <= 0) return kEngineDone;
  if (g.k <= 0) {
    for (idx j = 0; j < g.n; ++j) {
      if (abort_raised(g.abort)) return kEngineAborted;
      for (idx i = 0; i < g.m; ++i) {
        T* cp = g.c + 2 * (i * g.rsc + j * g.csc);
        const T cr = cp[0], ci = cp[1];
        const bool zero = g.beta_re == T(0) && g.beta_im == T(0);
        cp[0] = zero ? T(0) : g.beta_re * cr - g.beta_im * ci;
        cp[1] = zero ? T(0) : g.beta_re * ci + g.beta_im * cr;
      }
    }
    return kEngineDone;
  }
  if (g.rsc != 1 && g.csc == 1) {
    const bool conj_a = g.conj_a;
    g = transposed(g);
    g.conj_a = g.conj_b;
    g.conj_b = conj_a;
  }
  const double work = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  // As for real products: unpacked when either orientation has a column-major A (vector ISAs).
  if constexpr (Vec<T>::W >= 2) {
    if (work <= bl.small_complex && g.k <= kPollK) {
      if (g.rsa == 1) return small_complex<T>(g);
      if (g.csb == 1) {
        const bool conj_a = g.conj_a;
        ComplexGemm<T> t = transposed(g);
        t.conj_a = g.conj_b;
        t.conj_b = conj_a;
        return small_complex<T>(t);
      }
    }
  }
  if (work <= kSmallComplexStrided || g.m < 2 || g.n < 2) return direct_complex<T>(g);
  ComplexPolicy<T> pol{g};
  return drive<T>(pol, 2 * g.m, g.n, 2 * g.k, bl, g.abort);
}

// ---------------------------------------------------------------------------------------------
// Batches: the items share m, n, k and strides, so the path (small kernel, and in which
// orientation, or the general entry) is decided once and the loop runs it item after item.
// Moves `g` to the next item of the walk (multi-index `index`, last axis fastest).
template <class G>
static inline void next_item(G& g, idx* index, const BatchWalk& w) {
  for (int t = w.rank - 1; t >= 0; --t) {
    if (++index[t] < w.ext[t]) {
      g.a += w.sa[t];
      g.b += w.sb[t];
      g.c += w.sc[t];
      return;
    }
    index[t] = 0;
    g.a -= (w.ext[t] - 1) * w.sa[t];
    g.b -= (w.ext[t] - 1) * w.sb[t];
    g.c -= (w.ext[t] - 1) * w.sc[t];
  }
}

// Runs `one(item, next, more)` on every item of the walk: `next` is the item after it when
// `more` (the last item gets more == false and next == item).
template <class G, class Fn>
static int walk_batch(G g, const BatchWalk& w, Fn&& one) {
  idx index[kMaxBatchRank];
  for (int t = 0; t < w.rank; ++t) index[t] = w.index[t];
  for (idx l = 0; l < w.count; ++l) {
    if (abort_raised(g.abort)) return kEngineAborted;
    const bool more = l + 1 < w.count;
    G nx = g;
    if (more) next_item(nx, index, w);
    const int r = one(g, nx, more);
    if (r != kEngineDone) return r;
    g = nx;
  }
  return kEngineDone;
}

// Bytes of one batch item's operands from which (tiny items — 8 x 8 x 8 — stream well enough
// through the hardware prefetchers, and their K loops are too short to hide the cursor) and up to
// which (its A, B and C sit beside the current item's in L1/L2 while it computes) the small path
// prefetches the next item (bench: 10,000 x 8 x 8, 4,000 x 16 x 16, 1,000 x 32 x 32 f64).
constexpr idx kPrefetchItemMinBytes = 4 * 1024;
constexpr idx kPrefetchItemBytes = 96 * 1024;

// The next item's dense spans (A, B and C of item `x`) for the prefetch cursor, or none when an
// operand's span is more than twice its element count (a sparse span would fetch lines the item
// never reads) or the item is outside [kPrefetchItemMinBytes, kPrefetchItemBytes]. `steps`: the K steps the small
// kernel runs per item (two lines each, four when the item has more than twice as many lines).
template <class T>
static Prefetch prefetch_item(const RealGemm<T>& x, idx steps) {
  Prefetch pf;
  const idx m = x.m, n = x.n, k = x.k;
  const idx span_a = (m - 1) * x.rsa + (k - 1) * x.csa + 1, span_b = (k - 1) * x.rsb + (n - 1) * x.csb + 1,
            span_c = (m - 1) * x.rsc + (n - 1) * x.csc + 1;
  if (span_a > 2 * m * k || span_b > 2 * k * n || span_c > 2 * m * n) return pf;
  const idx bytes = (span_a + span_b + span_c) * static_cast<idx>(sizeof(T));
  if (bytes < kPrefetchItemMinBytes || bytes > kPrefetchItemBytes) return pf;
  const char* a = reinterpret_cast<const char*>(x.a);
  const char* b = reinterpret_cast<const char*>(x.b);
  const char* c = reinterpret_cast<const char*>(x.c);
  pf.lo[0] = a, pf.hi[0] = a + span_a * static_cast<idx>(sizeof(T));
  pf.lo[1] = b, pf.hi[1] = b + span_b * static_cast<idx>(sizeof(T));
  pf.lo[2] = c, pf.hi[2] = c + span_c * static_cast<idx>(sizeof(T));
  pf.count = 3;
  pf.wide = (span_a + span_b + span_c) * static_cast<idx>(sizeof(T)) / 64 > 2 * steps;
  return pf;
}

template <class T>
static int batch_real(const RealGemm<T>& g, const BatchWalk& w, const Blocking& bl) {
  if (g.m <= 0 || g.n <= 0 || w.count <= 0) return kEngineDone;
  // run_real's choice, made once: C's unit stride along M, then the small kernel in the
  // orientation with a column-major A.
  const bool tc = g.k > 0 && g.rsc != 1 && g.csc == 1;
  const RealGemm<T> o = tc ? transposed(g) : g;
  const double work = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  const bool plain = o.rsa == 1 && small_streams_fit<T>(o.k, o.n, bl) && small_lines_fit<T>(o);
  const bool flipped = !plain && o.csb == 1 && small_streams_fit<T>(o.k, o.m, bl) && small_lines_fit<T>(transposed(o));
  const bool small = g.k > 0 && work <= bl.small && g.k <= kPollK && (plain || flipped);
  if (!small) return walk_batch(g, w, [&](const RealGemm<T>& x, const RealGemm<T>&, bool) { return run_real<T>(x, bl); });
  const bool ts = !plain;
  // Prefetch the next item only when the task's items do not all fit in half of L2 (then they
  // stay cached from call to call, and the prefetches would only take load slots); the spans do
  // not depend on the item, so this is decided once.
  const RealGemm<T> s = ts ? transposed(o) : o;
  const idx steps = (s.m + Cfg<T>::MR - 1) / Cfg<T>::MR * ((s.n + Cfg<T>::NR - 1) / Cfg<T>::NR) * s.k;
  const Prefetch probe = prefetch_item<T>(g, steps);
  idx item_bytes = 0;
  for (int r = 0; r < probe.count; ++r) item_bytes += probe.hi[r] - probe.lo[r];
  const bool ahead = w.count > 1 && probe.count > 0 && static_cast<double>(item_bytes) * static_cast<double>(w.count) > 0.5 * static_cast<double>(cache_info().l2);
  if (!ahead) {
    return walk_batch(g, w, [&](const RealGemm<T>& x, const RealGemm<T>&, bool) {
      const RealGemm<T> y = tc ? transposed(x) : x;
      return small_real<T>(ts ? transposed(y) : y);
    });
  }
  return walk_batch(g, w, [&](const RealGemm<T>& x, const RealGemm<T>& next, bool more) {
    const RealGemm<T> y = tc ? transposed(x) : x;
    Prefetch pf;
    if (more) pf = prefetch_item<T>(next, steps);
    return small_real<T, true>(ts ? transposed(y) : y, pf);
  });
}

template <class T>
static int batch_complex(const ComplexGemm<T>& g, const BatchWalk& w, const Blocking& bl) {
  if (g.m <= 0 || g.n <= 0 || w.count <= 0) return kEngineDone;
  if constexpr (Vec<T>::W >= 2) {
    const bool tc = g.k > 0 && g.rsc != 1 && g.csc == 1;
    auto flip = [](const ComplexGemm<T>& x) {
      ComplexGemm<T> t = transposed(x);
      t.conj_a = x.conj_b;
      t.conj_b = x.conj_a;
      return t;
    };
    const ComplexGemm<T> o = tc ? flip(g) : g;
    const double work = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
    const bool small = g.k > 0 && work <= bl.small_complex && g.k <= kPollK && (o.rsa == 1 || o.csb == 1);
    if (small) {
      const bool ts = o.rsa != 1;
      return walk_batch(g, w, [&](const ComplexGemm<T>& x, const ComplexGemm<T>&, bool) {
        const ComplexGemm<T> y = tc ? flip(x) : x;
        return small_complex<T>(ts ? flip(y) : y);
      });
    }
  }
  return walk_batch(g, w, [&](const ComplexGemm<T>& x, const ComplexGemm<T>&, bool) { return run_complex<T>(x, bl); });
}

// Independent FMA chains in registers: the single-thread FMA throughput of this path.
template <class T>
static double fma_peak_impl(double seconds) {
  using V = Vec<T>;
  using R = typename V::R;
  constexpr int CH = 16;
  R acc[CH];
  for (int i = 0; i < CH; ++i) acc[i] = V::set1(T(1) + T(i) * T(1e-3));
  const R x = V::set1(T(0.999999)), y = V::set1(T(1e-6));
  const idx iters = 1 << 20;
  double flops = 0;
  const double t0 = now_seconds();
  double t = t0;
  do {
    for (idx it = 0; it < iters; ++it) {
#pragma GCC unroll 16
      for (int i = 0; i < CH; ++i) acc[i] = V::fma(acc[i], x, y);
    }
    flops += 2.0 * CH * V::W * static_cast<double>(iters);
    t = now_seconds();
  } while (t - t0 < seconds);
  alignas(64) T sink[V::W];
  R s = acc[0];
  for (int i = 1; i < CH; ++i) s = V::fma(acc[i], x, s);
  V::store(sink, s);
  volatile T keep = sink[0];
  (void)keep;
  return flops / (t - t0) * 1e-9;
}

static int gemm_f32(const RealGemm<float>& g, const Blocking& bl) { return run_real<float>(g, bl); }
static int gemm_f64(const RealGemm<double>& g, const Blocking& bl) { return run_real<double>(g, bl); }
static int gemm_c64(const ComplexGemm<float>& g, const Blocking& bl) { return run_complex<float>(g, bl); }
static int gemm_c128(const ComplexGemm<double>& g, const Blocking& bl) { return run_complex<double>(g, bl); }
static int batch_f32(const RealGemm<float>& g, const BatchWalk& w, const Blocking& bl) { return batch_real<float>(g, w, bl); }
static int batch_f64(const RealGemm<double>& g, const BatchWalk& w, const Blocking& bl) { return batch_real<double>(g, w, bl); }
static int batch_c64(const ComplexGemm<float>& g, const BatchWalk& w, const Blocking& bl) { return batch_complex<float>(g, w, bl); }
static int batch_c128(const ComplexGemm<double>& g, const BatchWalk& w, const Blocking& bl) { return batch_complex<double>(g, w, bl); }
static int gather_f32(const GatherGemm<float>& g, const Blocking& bl) { return run_gather<float>(g, bl); }
static int gather_f64(const GatherGemm<double>& g, const Blocking& bl) { return run_gather<double>(g, bl); }
