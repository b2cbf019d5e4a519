// The strided tensor-primitive engine, compiled once per ISA path: kernels_{scalar,avx2,avx512}.cc
// include this inside their own namespace (tprims::isa_*) under their `#pragma GCC target`, after
// the system headers. Nothing here allocates except the per-thread reduction scratch.
//
// Every task arrives checked (entry.cc): every reachable element of every operand lies inside its
// array. The engine only chooses loop orders:
//   - axes of extent 1 are dropped, the rest sorted by the stride of the output (element-wise) or
//     of the source (reductions), and adjacent axes fused when every operand is contiguous across
//     them (so a contiguous tensor is one long loop the compiler vectorises);
//   - a unary task whose source runs along another axis than its output (a transpose) is walked
//     in cache-blocked 2-D tiles over the output's and the source's fastest axes (8x8 register
//     blocks for plain 8-byte copies on the AVX-512 path);
//   - reductions with a reduced innermost axis fold each output's elements pairwise (blocks of
//     kLeaf with independent accumulators, pairwise above); with a kept innermost axis they fold
//     kChunk outputs at once, rows of the reduced axes combined pairwise.
#ifndef TPRIMS_ENGINE_NS
#error "include tprims_engine.h from a kernels_*.cc translation unit"
#endif

template <class T>
struct Cx {
  T re, im;
};

using b8 = uint8_t;

template <int D> struct DT;
template <> struct DT<kF32> { using type = float; };
template <> struct DT<kF64> { using type = double; };
template <> struct DT<kC64> { using type = Cx<float>; };
template <> struct DT<kC128> { using type = Cx<double>; };
template <> struct DT<kI32> { using type = int32_t; };
template <> struct DT<kI64> { using type = int64_t; };
template <> struct DT<kBool> { using type = b8; };

template <class T> struct IsCx : std::false_type {};
template <class T> struct IsCx<Cx<T>> : std::true_type {};
template <class T> constexpr bool kFloat = std::is_floating_point<T>::value;
template <class T> constexpr bool kInt = std::is_same<T, int32_t>::value || std::is_same<T, int64_t>::value;

// ---------------------------------------------------------------------------------------------
// Geometry: up to 4 "operands" per axis (out, a, b, and the reduced-index weight).
struct Geo {
  int rank;
  const int32_t* abort = nullptr;  // the execution's abort word (null: never stops early)
  idx n[kMaxRank];
  idx s[4][kMaxRank];
  bool red[kMaxRank];
};

static inline void swap_axes(Geo& g, int i, int j) {
  std::swap(g.n[i], g.n[j]);
  for (int k = 0; k < 4; ++k) std::swap(g.s[k][i], g.s[k][j]);
  std::swap(g.red[i], g.red[j]);
}

// Drop extent-1 axes, sort by the stride of operand `key` (ties: by the other operands), fuse
// axes every operand in [0, nops) walks contiguously (with equal reduced flags).
static inline void canon(Geo& g, int nops, int key) {
  int r = 0;
  for (int i = 0; i < g.rank; ++i) {
    if (g.n[i] == 1) continue;
    if (r != i) {
      g.n[r] = g.n[i];
      for (int k = 0; k < 4; ++k) g.s[k][r] = g.s[k][i];
      g.red[r] = g.red[i];
    }
    ++r;
  }
  g.rank = r;
  auto less = [&](int i, int j) {
    if (g.s[key][i] != g.s[key][j]) return g.s[key][i] < g.s[key][j];
    for (int k = 0; k < nops; ++k) {
      if (g.s[k][i] != g.s[k][j]) return g.s[k][i] < g.s[k][j];
    }
    return false;
  };
  for (int i = 1; i < r; ++i) {
    for (int j = i; j > 0 && less(j, j - 1); --j) swap_axes(g, j, j - 1);
  }
  if (r == 0) return;
  int w = 0;
  for (int i = 1; i < r; ++i) {
    bool fuse = g.red[i] == g.red[w];
    for (int k = 0; k < nops && fuse; ++k) fuse = static_cast<__int128>(g.s[k][i]) == static_cast<__int128>(g.s[k][w]) * g.n[w];
    if (fuse) {
      g.n[w] *= g.n[i];  // the entry bounded the element count by 2^53
    } else {
      ++w;
      g.n[w] = g.n[i];
      for (int k = 0; k < 4; ++k) g.s[k][w] = g.s[k][i];
      g.red[w] = g.red[i];
    }
  }
  g.rank = w + 1;
}

// Whether the execution's abort word was raised (a relaxed load: the word only ever goes 0 → non-zero).
static inline bool raised(const int32_t* abort) { return abort != nullptr && __atomic_load_n(abort, __ATOMIC_RELAXED) != 0; }

// Calls f(off) for every index of the axes `axes[0..count)` (the first fastest), with off[k]
// the offset of operand k (NOPS of them) from `base`. Polls `g.abort` after each call (a call is
// a row or a tile: thousands of elements at most between two polls for any large task) and
// returns true when it stopped early because the word was raised.
template <int NOPS, class F>
static inline bool odometer(const Geo& g, const int* axes, int count, const idx* base, F&& f) {
  idx off[NOPS];
  for (int k = 0; k < NOPS; ++k) off[k] = base[k];
  idx cnt[kMaxRank] = {};
  for (;;) {
    f(static_cast<const idx*>(off));
    if (raised(g.abort)) return true;
    int t = 0;
    for (; t < count; ++t) {
      const int ax = axes[t];
      if (++cnt[t] < g.n[ax]) {
        for (int k = 0; k < NOPS; ++k) off[k] += g.s[k][ax];
        break;
      }
      cnt[t] = 0;
      for (int k = 0; k < NOPS; ++k) off[k] -= (g.n[ax] - 1) * g.s[k][ax];
    }
    if (t == count) return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Conversions (cast): saturating, NaN → 0 for integer targets; complex → real takes the real
// part; anything → bool is "non-zero".
template <class T> static inline double re_of(T x) { return static_cast<double>(x); }
static inline double re_of(b8 x) { return x != 0 ? 1.0 : 0.0; }  // any non-zero byte is true
template <class T> static inline double re_of(Cx<T> x) { return static_cast<double>(x.re); }
template <class T> static inline double im_of(T) { return 0.0; }
template <class T> static inline double im_of(Cx<T> x) { return static_cast<double>(x.im); }

template <class TO> struct Convert;
template <> struct Convert<float> {
  template <class TI> static inline float from(TI x) { return static_cast<float>(re_of(x)); }
  static inline float from(float x) { return x; }
  static inline float from(int64_t x) { return static_cast<float>(x); }  // rounded once
};
template <> struct Convert<double> {
  template <class TI> static inline double from(TI x) { return re_of(x); }
};
template <class T> struct Convert<Cx<T>> {
  template <class TI> static inline Cx<T> from(TI x) {
    if constexpr (std::is_same<TI, int64_t>::value) return {static_cast<T>(x), T(0)};  // rounded once
    else return {static_cast<T>(re_of(x)), static_cast<T>(im_of(x))};
  }
};
template <> struct Convert<int32_t> {
  template <class TI> static inline int32_t from(TI x) {
    if constexpr (std::is_same<TI, int64_t>::value) {
      return x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : static_cast<int32_t>(x);
    } else if constexpr (std::is_same<TI, int32_t>::value) {
      return x;
    } else if constexpr (std::is_same<TI, b8>::value) {
      return x != 0 ? 1 : 0;
    } else {
      const double v = re_of(x);
      if (v != v) return 0;
      if (v >= 2147483647.0) return INT32_MAX;
      if (v <= -2147483648.0) return INT32_MIN;
      return static_cast<int32_t>(v);
    }
  }
};
template <> struct Convert<int64_t> {
  template <class TI> static inline int64_t from(TI x) {
    if constexpr (std::is_same<TI, int64_t>::value || std::is_same<TI, int32_t>::value) {
      return static_cast<int64_t>(x);
    } else if constexpr (std::is_same<TI, b8>::value) {
      return x != 0 ? 1 : 0;
    } else {
      const double v = re_of(x);
      if (v != v) return 0;
      if (v >= 9223372036854775808.0) return INT64_MAX;
      if (v <= -9223372036854775808.0) return INT64_MIN;
      return static_cast<int64_t>(v);
    }
  }
};
template <> struct Convert<b8> {
  template <class TI> static inline b8 from(TI x) {
    if constexpr (IsCx<TI>::value) return (x.re != 0 || x.im != 0) ? 1 : 0;
    else return x != 0 ? 1 : 0;
  }
};

// ---------------------------------------------------------------------------------------------
// Element functions.
template <class T> static inline T wrap_neg(T x) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(U(0) - static_cast<U>(x));
}
template <class T> static inline T wrap_add(T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T> static inline T wrap_sub(T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T> static inline T wrap_mul(T a, T b) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <class T> static inline T int_div(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return wrap_neg(a);  // INT_MIN / -1 → INT_MIN
  return a / b;
}
// An integer alpha for `scale` of integers, modulo 2^64 (truncated first; NaN and infinities → 0):
// the product then wraps like any integer product (i32 takes the low 32 bits, as ToInt32 does).
static inline uint64_t alpha_bits(double a) {
  if (!std::isfinite(a)) return 0;
  const double two64 = 18446744073709551616.0;
  double m = std::fmod(std::trunc(a), two64);  // exact, in (-2^64, 2^64)
  if (m >= 9223372036854775808.0) m -= two64;   // exact (Sterbenz): now in [-2^63, 2^63)
  else if (m < -9223372036854775808.0) m += two64;
  return static_cast<uint64_t>(static_cast<int64_t>(m));
}

template <class T> static inline bool isnan_(T x) {
  if constexpr (kFloat<T>) return x != x;
  else return false;
}

template <class T> static inline std::complex<double> cd(Cx<T> x) { return {static_cast<double>(x.re), static_cast<double>(x.im)}; }
template <class T> static inline Cx<T> cx(std::complex<double> z) { return {static_cast<T>(z.real()), static_cast<T>(z.imag())}; }

template <int Op, class TI, class TO>
struct UnaryFn {
  double ar, ai;
  inline TO operator()(TI x) const {
    if constexpr (Op == kCast) {
      return Convert<TO>::from(x);
    } else if constexpr (IsCx<TI>::value) {
      using R = decltype(x.re);
      if constexpr (Op == kCopy) return x;
      else if constexpr (Op == kCopyConj || Op == kConj) return TO{x.re, -x.im};
      else if constexpr (Op == kNeg) return TO{-x.re, -x.im};
      else if constexpr (Op == kAbs) return static_cast<TO>(std::hypot(static_cast<double>(x.re), static_cast<double>(x.im)));
      else if constexpr (Op == kReal) return x.re;
      else if constexpr (Op == kImag) return x.im;
      else if constexpr (Op == kScale) {
        const double re = static_cast<double>(x.re), im = static_cast<double>(x.im);
        return TO{static_cast<R>(re * ar - im * ai), static_cast<R>(re * ai + im * ar)};
      } else if constexpr (Op == kExp) return cx<R>(std::exp(cd(x)));
      else if constexpr (Op == kLog) return cx<R>(std::log(cd(x)));
      else if constexpr (Op == kSqrt) return cx<R>(std::sqrt(cd(x)));
      else if constexpr (Op == kSin) return cx<R>(std::sin(cd(x)));
      else if constexpr (Op == kCos) return cx<R>(std::cos(cd(x)));
      else return cx<R>(std::tanh(cd(x)));
    } else if constexpr (kFloat<TI>) {
      if constexpr (Op == kCopy || Op == kCopyConj || Op == kConj || Op == kReal) return x;
      else if constexpr (Op == kImag) return TO(0);
      else if constexpr (Op == kNeg) return -x;
      else if constexpr (Op == kAbs) return std::fabs(x);
      else if constexpr (Op == kScale) return static_cast<TO>(static_cast<double>(x) * ar);
      else if constexpr (Op == kExp) return static_cast<TO>(std::exp(static_cast<double>(x)));
      else if constexpr (Op == kLog) return static_cast<TO>(std::log(static_cast<double>(x)));
      else if constexpr (Op == kSqrt) return static_cast<TO>(std::sqrt(static_cast<double>(x)));
      else if constexpr (Op == kSin) return static_cast<TO>(std::sin(static_cast<double>(x)));
      else if constexpr (Op == kCos) return static_cast<TO>(std::cos(static_cast<double>(x)));
      else return static_cast<TO>(std::tanh(static_cast<double>(x)));
    } else {  // integers and bool
      if constexpr (Op == kCopy || Op == kCopyConj || Op == kConj || Op == kReal) return x;
      else if constexpr (Op == kImag) return TO(0);
      else if constexpr (Op == kNeg) return wrap_neg(x);
      else if constexpr (Op == kScale) return wrap_mul(x, static_cast<TO>(alpha_bits(ar)));
      else return x < 0 ? wrap_neg(x) : x;  // kAbs: |INT_MIN| = INT_MIN
    }
  }
};

template <int Op, class T>
struct BinaryFn {
  using TO = typename std::conditional<(Op >= kEq), b8, T>::type;
  inline TO operator()(T a, T b) const {
    if constexpr (std::is_same<T, b8>::value) {  // bool: any non-zero byte is 1; maximum is or, minimum is and
      a = a != 0;
      b = b != 0;
    }
    if constexpr (IsCx<T>::value) {
      using R = decltype(a.re);
      if constexpr (Op == kAdd) return T{a.re + b.re, a.im + b.im};
      else if constexpr (Op == kSub) return T{a.re - b.re, a.im - b.im};
      else if constexpr (Op == kMul) {
        const double ar = a.re, ai = a.im, br = b.re, bi = b.im;
        return T{static_cast<R>(ar * br - ai * bi), static_cast<R>(ar * bi + ai * br)};
      } else if constexpr (Op == kDiv) {
        // Smith's algorithm in f64, step for step core's reference (complex-math.ts cdiv): |b|² is
        // never formed (it overflows or underflows for c128 divisors beyond 1e154 or below 1e-154),
        // and a zero divisor gives (re/0, im/0), e.g. (1+0i)/0 = inf+NaN·i, as PyTorch.
        const double ar = a.re, ai = a.im, br = b.re, bi = b.im;
        double re, im;
        if (std::fabs(br) >= std::fabs(bi)) {
          if (br == 0 && bi == 0) {
            re = ar / 0.0;
            im = ai / 0.0;
          } else {
            const double r = bi / br, d = br + bi * r;
            re = (ar + ai * r) / d;
            im = (ai - ar * r) / d;
          }
        } else {
          const double r = br / bi, d = bi + br * r;
          re = (ar * r + ai) / d;
          im = (ai * r - ar) / d;
        }
        return T{static_cast<R>(re), static_cast<R>(im)};
      } else if constexpr (Op == kPow) return cx<R>(std::pow(cd(a), cd(b)));
      else return (a.re == b.re && a.im == b.im) ? 1 : 0;  // kEq
    } else if constexpr (kFloat<T>) {
      if constexpr (Op == kAdd) return a + b;
      else if constexpr (Op == kSub) return a - b;
      else if constexpr (Op == kMul) return a * b;
      else if constexpr (Op == kDiv) return a / b;
      else if constexpr (Op == kMaximum) return (a != a || b != b) ? a + b : a > b ? a : b > a ? b : std::signbit(a) ? b : a;
      else if constexpr (Op == kMinimum) return (a != a || b != b) ? a + b : a < b ? a : b < a ? b : std::signbit(a) ? a : b;
      else if constexpr (Op == kPow) return static_cast<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
      else if constexpr (Op == kEq) return a == b;
      else if constexpr (Op == kLt) return a < b;
      else if constexpr (Op == kLe) return a <= b;
      else if constexpr (Op == kGt) return a > b;
      else return a >= b;
    } else {
      if constexpr (Op == kAdd) return wrap_add(a, b);
      else if constexpr (Op == kSub) return wrap_sub(a, b);
      else if constexpr (Op == kMul) return wrap_mul(a, b);
      else if constexpr (Op == kDiv) return int_div(a, b);
      else if constexpr (Op == kMaximum) return a > b ? a : b;
      else if constexpr (Op == kMinimum) return a < b ? a : b;
      else if constexpr (Op == kEq) return a == b;
      else if constexpr (Op == kLt) return a < b;
      else if constexpr (Op == kLe) return a <= b;
      else if constexpr (Op == kGt) return a > b;
      else return a >= b;
    }
  }
};

// ---------------------------------------------------------------------------------------------
// Element-wise drivers.
constexpr idx kPollElements = idx(1) << 16;  // element-wise rows are cut into pieces of this many elements, the abort word polled between them
constexpr idx kMacro = 64;             // transposes: macro tiles of kMacro x kMacro elements ...
constexpr idx kNonTemporalBytes = 8 << 20;  // ... written with non-temporal stores (8-byte elements) from this output size on

// Store v at p; with `nt`, as a non-temporal store (8-byte elements only: a large transposed copy
// writes whole lines through the write-combining buffers, no read-for-ownership, as memcpy does).
template <class TO>
static inline void put_elem(TO* p, TO v, bool nt) {
#if defined(__x86_64__)
  if constexpr (sizeof(TO) == 8 && std::is_trivially_copyable<TO>::value) {
    if (nt) {
      long long bits;
      std::memcpy(&bits, &v, 8);
      _mm_stream_si64(reinterpret_cast<long long*>(p), bits);
      return;
    }
  }
#endif
  (void)nt;
  *p = v;
}

// Whether F is the plain copy of T to T (the functor of `copy`): its transposes move bits only.
template <class F> struct IsPlainCopy : std::false_type {};
template <class T> struct IsPlainCopy<UnaryFn<kCopy, T, T>> : std::true_type {};

constexpr idx kLineMacro = 256;  // plain transposes: 8x8 line blocks walked in macro tiles of this many elements per side
constexpr idx kWide = 4;  // ... in strips of this many columns of blocks (each source row read this many lines at a time)

// Whether a plain transpose prefetches the next strip's source lines. It pays on the portable
// path (4096² f64 on a Zen 3, 1 thread: 49–51 ms with it, 55–70 without) and stays on the avx512f
// path, where it was introduced; on the avx2 path the same prefetches cost 15–30 % (1 thread
// 26–33 ms without, 32–39 with; 2 threads 17–19 against 21–26): the register blocks keep enough
// loads in flight there, and each prefetch that misses the TLB stalls the strip.
#if defined(TPRIMS_ISA_AVX2)
constexpr bool kStripPrefetch = false;
#else
constexpr bool kStripPrefetch = true;
#endif

#if defined(TPRIMS_ISA_AVX512)
// One 8x8 block of 8-byte elements: rows a + k·sa (k < 8, each 8 contiguous elements) become
// rows o + l·so of the output (o[l·so + k] = a[k·sa + l]), moved as bits through registers
// (unpack + 128-bit lane shuffles: no arithmetic, NaN payloads kept). With `nt` every output row
// is one aligned 64-byte non-temporal store (the caller checked the alignment).
static inline void block8x8(const void* src, idx sa, void* dst, idx so, bool nt) {
  const double* a = static_cast<const double*>(src);
  double* o = static_cast<double*>(dst);
  const __m512d r0 = _mm512_loadu_pd(a), r1 = _mm512_loadu_pd(a + sa), r2 = _mm512_loadu_pd(a + 2 * sa), r3 = _mm512_loadu_pd(a + 3 * sa);
  const __m512d r4 = _mm512_loadu_pd(a + 4 * sa), r5 = _mm512_loadu_pd(a + 5 * sa), r6 = _mm512_loadu_pd(a + 6 * sa), r7 = _mm512_loadu_pd(a + 7 * sa);
  const __m512d t0 = _mm512_unpacklo_pd(r0, r1), t1 = _mm512_unpackhi_pd(r0, r1), t2 = _mm512_unpacklo_pd(r2, r3), t3 = _mm512_unpackhi_pd(r2, r3);
  const __m512d t4 = _mm512_unpacklo_pd(r4, r5), t5 = _mm512_unpackhi_pd(r4, r5), t6 = _mm512_unpacklo_pd(r6, r7), t7 = _mm512_unpackhi_pd(r6, r7);
  const __m512d u0 = _mm512_shuffle_f64x2(t0, t2, 0x88), u1 = _mm512_shuffle_f64x2(t1, t3, 0x88), u2 = _mm512_shuffle_f64x2(t0, t2, 0xdd), u3 = _mm512_shuffle_f64x2(t1, t3, 0xdd);
  const __m512d u4 = _mm512_shuffle_f64x2(t4, t6, 0x88), u5 = _mm512_shuffle_f64x2(t5, t7, 0x88), u6 = _mm512_shuffle_f64x2(t4, t6, 0xdd), u7 = _mm512_shuffle_f64x2(t5, t7, 0xdd);
  const __m512d c0 = _mm512_shuffle_f64x2(u0, u4, 0x88), c4 = _mm512_shuffle_f64x2(u0, u4, 0xdd), c1 = _mm512_shuffle_f64x2(u1, u5, 0x88), c5 = _mm512_shuffle_f64x2(u1, u5, 0xdd);
  const __m512d c2 = _mm512_shuffle_f64x2(u2, u6, 0x88), c6 = _mm512_shuffle_f64x2(u2, u6, 0xdd), c3 = _mm512_shuffle_f64x2(u3, u7, 0x88), c7 = _mm512_shuffle_f64x2(u3, u7, 0xdd);
  if (nt) {
    _mm512_stream_pd(o, c0); _mm512_stream_pd(o + so, c1); _mm512_stream_pd(o + 2 * so, c2); _mm512_stream_pd(o + 3 * so, c3);
    _mm512_stream_pd(o + 4 * so, c4); _mm512_stream_pd(o + 5 * so, c5); _mm512_stream_pd(o + 6 * so, c6); _mm512_stream_pd(o + 7 * so, c7);
  } else {
    _mm512_storeu_pd(o, c0); _mm512_storeu_pd(o + so, c1); _mm512_storeu_pd(o + 2 * so, c2); _mm512_storeu_pd(o + 3 * so, c3);
    _mm512_storeu_pd(o + 4 * so, c4); _mm512_storeu_pd(o + 5 * so, c5); _mm512_storeu_pd(o + 6 * so, c6); _mm512_storeu_pd(o + 7 * so, c7);
  }
}
#elif defined(TPRIMS_ISA_AVX2)
// The same 8x8 block on the avx2 path: four 4x4 register transposes (unpack + 128-bit lane
// permutes, bits only). Each output row is two 32-byte stores written back to back — with `nt`,
// two aligned non-temporal stores that fill one 64-byte write-combining line before the next
// (halves of a line written apart are flushed as partial writes: 67 vs 44 ms for a 4096² f64).
static inline void transpose4x4(const double* a, idx sa, __m256d& c0, __m256d& c1, __m256d& c2, __m256d& c3) {
  const __m256d r0 = _mm256_loadu_pd(a), r1 = _mm256_loadu_pd(a + sa), r2 = _mm256_loadu_pd(a + 2 * sa), r3 = _mm256_loadu_pd(a + 3 * sa);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  c0 = _mm256_permute2f128_pd(t0, t2, 0x20);
  c1 = _mm256_permute2f128_pd(t1, t3, 0x20);
  c2 = _mm256_permute2f128_pd(t0, t2, 0x31);
  c3 = _mm256_permute2f128_pd(t1, t3, 0x31);
}

static inline void block8x8(const void* src, idx sa, void* dst, idx so, bool nt) {
  const double* a = static_cast<const double*>(src);
  double* o = static_cast<double*>(dst);
  // Unrolled in full, so that lo and hi stay in registers (-O2 would keep both loops: #39).
#pragma GCC unroll 2
  for (int lb = 0; lb < 8; lb += 4) {  // source columns lb..lb+3 → output rows lb..lb+3
    __m256d lo[4], hi[4];              // output columns 0..3 (source rows 0..3) and 4..7
    transpose4x4(a + lb, sa, lo[0], lo[1], lo[2], lo[3]);
    transpose4x4(a + 4 * sa + lb, sa, hi[0], hi[1], hi[2], hi[3]);
#pragma GCC unroll 4
    for (int l = 0; l < 4; ++l) {
      double* q = o + (lb + l) * so;
      if (nt) {
        _mm256_stream_pd(q, lo[l]);
        _mm256_stream_pd(q + 4, hi[l]);
      } else {
        _mm256_storeu_pd(q, lo[l]);
        _mm256_storeu_pd(q + 4, hi[l]);
      }
    }
  }
}
#endif

// Elements of a contiguous output row before its first 64-byte line boundary (at most n; 0 when
// the output is not aligned to its element): the row loops do these first, so that the
// vectorised loop stores whole aligned lines (and loads them too when the operands share the
// output's offset within a line, as calloc'd ArrayBuffers do) — a vector access that straddles
// two lines costs two.
template <class TO>
static inline idx line_head(const TO* o, idx n) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(o) % 64;
  if (at % sizeof(TO) != 0) return 0;
  return std::min(n, static_cast<idx>((64 - at) % 64 / sizeof(TO)));
}

// One 64-byte line `src` (aligned) stored at `dst` (aligned) with non-temporal stores: whole lines
// through the write-combining buffers, no read-for-ownership of the output (one 512-bit store on
// the avx512f path, two 256-bit ones on avx2, four SSE2 ones on every other x86-64 path).
static inline void stream_line(void* dst, const void* src) {
#if defined(TPRIMS_ISA_AVX512)
  _mm512_stream_si512(static_cast<__m512i*>(dst), _mm512_load_si512(src));
#elif defined(TPRIMS_ISA_AVX2)
  __m256i* d = static_cast<__m256i*>(dst);
  const __m256i* v = static_cast<const __m256i*>(src);
  _mm256_stream_si256(d, _mm256_load_si256(v));
  _mm256_stream_si256(d + 1, _mm256_load_si256(v + 1));
#elif defined(__x86_64__)
  __m128i* d = static_cast<__m128i*>(dst);
  const __m128i* v = static_cast<const __m128i*>(src);
  _mm_stream_si128(d, _mm_load_si128(v));
  _mm_stream_si128(d + 1, _mm_load_si128(v + 1));
  _mm_stream_si128(d + 2, _mm_load_si128(v + 2));
  _mm_stream_si128(d + 3, _mm_load_si128(v + 3));
#else
  std::memcpy(dst, src, 64);
#endif
}

// A contiguous row o[i] = at(i), i in [h, n), of a large output (`nt`, see kNonTemporalBytes) whose
// element h starts a 64-byte line: computed four lines (256 bytes) at a time into an L1-resident
// chunk by a plain vectorisable loop, then streamed out line by line (no store-to-load forwarding
// of partial lines, no read-for-ownership of the output). Small chunks keep the operands' loads
// and the output's streams interleaved: with 4 KiB chunks they alternate in long bursts, and a
// 2^24-element f32 add measured 13.3–17.0 ms on a Zen 3 against 10.1–11.9 ms with 256-byte chunks
// (plain stores: 13.3–15.9 ms). Returns false, writing nothing, otherwise.
template <class TO, class At>
static inline bool stream_row(idx n, TO* __restrict o, idx h, bool nt, const At& at) {
  if constexpr (64 % sizeof(TO) == 0 && std::is_trivially_copyable<TO>::value) {
    if (nt && reinterpret_cast<uintptr_t>(o + h) % 64 == 0) {
      constexpr idx L = 64 / static_cast<idx>(sizeof(TO));
      constexpr idx C = 256 / static_cast<idx>(sizeof(TO));
      alignas(64) TO chunk[C];
      const idx whole = h + (n - h) / L * L;  // the end of the whole lines
      idx i = h;
      while (i < whole) {
        const idx c = std::min(C, whole - i);  // a multiple of L
        for (idx j = 0; j < c; ++j) chunk[j] = at(i + j);
        for (idx j = 0; j < c; j += L) stream_line(o + i + j, chunk + j);
        i += c;
      }
      for (; i < n; ++i) o[i] = at(i);
      return true;
    }
  }
  return false;
}

template <class TI, class TO, class F>
static inline void unary_row(idx n, TO* __restrict o, idx so, const TI* __restrict a, idx sa, const F& f, bool nt) {
  if (so == 1 && sa == 1) {
    const idx h = line_head(o, n);
    for (idx i = 0; i < h; ++i) o[i] = f(a[i]);
    if (stream_row(n, o, h, nt, [&](idx i) { return f(a[i]); })) return;
    for (idx i = h; i < n; ++i) o[i] = f(a[i]);
  } else if (so == 1 && sa == 0) {
    const TO v = f(a[0]);
    for (idx i = 0; i < n; ++i) o[i] = v;
  } else {
    for (idx i = 0; i < n; ++i) o[i * so] = f(a[i * sa]);
  }
}

template <class TI, class TO, class F>
static int run_unary(const Task& t, const F& f) {
  Geo g;
  g.rank = t.rank;
  g.abort = t.abort;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] == 0) return kOk;
    g.n[i] = t.shape[i];
    g.s[0][i] = t.s_out[i];
    g.s[1][i] = t.s_a[i];
    g.s[2][i] = g.s[3][i] = 0;
    g.red[i] = false;
  }
  canon(g, 2, 0);
  TO* o = reinterpret_cast<TO*>(t.out);
  const TI* a = reinterpret_cast<const TI*>(t.a);
  if (g.rank == 0) {
    o[0] = f(a[0]);
    return kOk;
  }
  // The source's fastest axis, when it is not the output's: walk 2-D tiles (a transpose).
  int j = 0;
  for (int i = 1; i < g.rank; ++i) {
    if (g.s[1][i] < g.s[1][j]) j = i;
  }
  int rest[kMaxRank];
  int nrest = 0;
  const idx base[2] = {0, 0};
  if (j != 0 && g.n[0] >= 4 && g.n[j] >= 4) {
    for (int i = 1; i < g.rank; ++i) {
      if (i != j) rest[nrest++] = i;
    }
    const idx n0 = g.n[0], nj = g.n[j];
    const idx so0 = g.s[0][0], soj = g.s[0][j], sa0 = g.s[1][0], saj = g.s[1][j];
    // Micro tiles of mi x kMicroJ: mi output elements fill one 64-byte line of the output's
    // fastest axis (one full line written at a time), inside kMacro x kMacro macro tiles.
    constexpr idx mi = sizeof(TO) >= 64 ? 1 : 64 / static_cast<idx>(sizeof(TO));
    idx total = 1;
    for (int i = 0; i < g.rank; ++i) total *= g.n[i];
    const bool nt = so0 == 1 && total * static_cast<idx>(sizeof(TO)) >= kNonTemporalBytes;
    // Cache-blocked micro tiles over the output rows [r0, r1) and columns [c0, c1) of one 2-D slice.
    auto tiles = [&](TO* ob, const TI* ab, idx r0, idx r1, idx c0, idx c1) {
      for (idx i0 = r0; i0 < r1; i0 += kMacro) {
        if (raised(g.abort)) return;
        const idx i1 = std::min(r1, i0 + kMacro);
        for (idx j0 = c0; j0 < c1; j0 += kMacro) {
          const idx j1 = std::min(c1, j0 + kMacro);
          for (idx ii = i0; ii < i1; ii += mi) {
            const idx ie = std::min(i1, ii + mi);
            for (idx jj = j0; jj < j1; ++jj) {
              TO* __restrict oc = ob + jj * soj + ii * so0;
              const TI* __restrict ar = ab + jj * saj + ii * sa0;
              if (ie - ii == mi && so0 == 1) {
                for (idx k = 0; k < mi; ++k) put_elem(oc + k, f(ar[k * sa0]), nt);
              } else {
                for (idx k = 0; k < ie - ii; ++k) oc[k * so0] = f(ar[k * sa0]);
              }
            }
          }
        }
      }
    };
    // Both fastest axes unit-stride (a plain transpose): square blocks of one cache line per side.
    // Every source line and every output line is read or written whole, once, so the walk is a
    // set of sequential streams — no reuse across tiles that power-of-two row strides would evict
    // from a set-associative cache.
    constexpr idx lb = sizeof(TO) == sizeof(TI) && sizeof(TO) <= 16 ? 64 / static_cast<idx>(sizeof(TO)) : 0;
    const bool lines = lb != 0 && so0 == 1 && saj == 1 && n0 >= lb && nj >= lb;
    // Whole-line non-temporal stores of the 8x8 register blocks: every output row of a block
    // starts on a 64-byte boundary (the block grid is aligned to the output's lines, below, and
    // the column stride is whole lines).
    const bool ntl = nt && (soj * static_cast<idx>(sizeof(TO))) % 64 == 0;
    const bool stopped = odometer<2>(g, rest, nrest, base, [&](const idx* off) {
      TO* ob = o + off[0];
      const TI* ab = a + off[1];
      if constexpr (lb != 0) {
        if (lines) {
          // The block grid starts where the lines start: pi leading output elements (along the
          // output's fastest axis) and pj leading source elements (along the source's) are
          // peeled off, so that every block reads whole source lines and writes whole output
          // lines when the other axis' stride is whole lines (a buffer need not start on a line:
          // a calloc'd ArrayBuffer starts 16 bytes into one, and an unaligned block then splits
          // every load and store over two lines). Otherwise the grid starts at 0.
          auto lead = [](const void* p, idx stride_elems, idx bytes) -> idx {
            const uintptr_t at = reinterpret_cast<uintptr_t>(p) % 64;
            if ((stride_elems * bytes) % 64 != 0 || at % static_cast<uintptr_t>(bytes) != 0) return 0;
            return static_cast<idx>((64 - at) % 64) / bytes;
          };
          const idx pi = lead(ob, soj, static_cast<idx>(sizeof(TO)));  // < lb <= n0
          const idx pj = lead(ab, sa0, static_cast<idx>(sizeof(TI)));  // < lb <= nj
          const idx ie = pi + (n0 - pi) / lb * lb, je = pj + (nj - pj) / lb * lb;
          const bool ntb = ntl && (reinterpret_cast<uintptr_t>(ob + pi) % 64 == 0);
          // Line blocks in macro tiles of kLineMacro² elements (a few hundred pages of each
          // operand: the TLB keeps them), each tile walked strip by strip of kWide columns of
          // blocks; the next strip's source lines are prefetched where that pays (kStripPrefetch:
          // the hardware prefetchers do not follow lb rows at a 2^k-line stride).
          auto block = [&](idx ii, idx jj) {
#if defined(TPRIMS_ISA_AVX512) || defined(TPRIMS_ISA_AVX2)
            if constexpr (IsPlainCopy<F>::value && sizeof(TO) == 8) {
              block8x8(ab + ii * sa0 + jj, sa0, ob + jj * soj + ii, soj, ntb);
              return;
            }
#endif
            TI blk[lb][lb];
            for (idx k = 0; k < lb; ++k) {
              const TI* __restrict ar = ab + (ii + k) * sa0 + jj;
              for (idx l = 0; l < lb; ++l) blk[k][l] = ar[l];
            }
            for (idx l = 0; l < lb; ++l) {
              TO* __restrict oc = ob + (jj + l) * soj + ii;
              for (idx k = 0; k < lb; ++k) put_elem(oc + k, f(blk[k][l]), nt);
            }
          };
          for (idx i0 = pi; i0 < ie; i0 += kLineMacro) {
            const idx i1 = std::min(ie, i0 + kLineMacro);
            for (idx j0 = pj; j0 < je; j0 += kLineMacro) {
              if (raised(g.abort)) return;
              const idx j1 = std::min(je, j0 + kLineMacro);
              // Strips of kWide columns of blocks: each source row is read kWide whole lines at a
              // time, the next strip's lines prefetched.
              for (idx jj = j0; jj < j1; jj += kWide * lb) {
                const idx jw = std::min(j1, jj + kWide * lb);
                const idx pe = std::min(je, jw + kWide * lb);  // the prefetched columns [jw, pe) lie inside the source
                for (idx ii = i0; ii < i1; ii += lb) {
                  if constexpr (kStripPrefetch) {
                    for (idx k = 0; k < lb; ++k) {
                      for (idx c = jw; c < pe; c += lb) __builtin_prefetch(ab + (ii + k) * sa0 + c, 0, 3);
                    }
                  } else {
                    (void)pe;
                  }
                  for (idx c = jj; c < jw; c += lb) block(ii, c);
                }
              }
            }
          }
          tiles(ob, ab, 0, pi, 0, nj);
          tiles(ob, ab, ie, n0, 0, nj);
          tiles(ob, ab, pi, ie, 0, pj);
          tiles(ob, ab, pi, ie, je, nj);
          return;
        }
      }
      tiles(ob, ab, 0, n0, 0, nj);
    });
#if defined(__x86_64__)
    if (nt) _mm_sfence();
#endif
    return stopped ? kAborted : kOk;
  }
  for (int i = 1; i < g.rank; ++i) rest[nrest++] = i;
  const idx n0 = g.n[0], so = g.s[0][0], sa = g.s[1][0];
  idx total = 1;
  for (int i = 0; i < g.rank; ++i) total *= g.n[i];
  const bool nt = so == 1 && sa == 1 && total * static_cast<idx>(sizeof(TO)) >= kNonTemporalBytes;
  const bool stopped = odometer<2>(g, rest, nrest, base, [&](const idx* off) {
    for (idx i = 0; i < n0 && !raised(g.abort); i += kPollElements) {
      unary_row<TI, TO>(std::min(kPollElements, n0 - i), o + off[0] + i * so, so, a + off[1] + i * sa, sa, f, nt);
    }
  });
#if defined(__x86_64__)
  if (nt) _mm_sfence();  // the lines are globally visible before the task reports completion
#endif
  return stopped ? kAborted : kOk;
}

template <class T, class TO, class F>
static inline void binary_row(idx n, TO* __restrict o, idx so, const T* __restrict a, idx sa, const T* __restrict b, idx sb, const F& f, bool nt) {
  if (so == 1 && sa == 1 && sb == 1) {
    const idx h = line_head(o, n);
    for (idx i = 0; i < h; ++i) o[i] = f(a[i], b[i]);
    if (stream_row(n, o, h, nt, [&](idx i) { return f(a[i], b[i]); })) return;
    for (idx i = h; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (so == 1 && sa == 1 && sb == 0) {
    const T bv = b[0];
    const idx h = line_head(o, n);
    for (idx i = 0; i < h; ++i) o[i] = f(a[i], bv);
    for (idx i = h; i < n; ++i) o[i] = f(a[i], bv);
  } else if (so == 1 && sa == 0 && sb == 1) {
    const T av = a[0];
    const idx h = line_head(o, n);
    for (idx i = 0; i < h; ++i) o[i] = f(av, b[i]);
    for (idx i = h; i < n; ++i) o[i] = f(av, b[i]);
  } else {
    for (idx i = 0; i < n; ++i) o[i * so] = f(a[i * sa], b[i * sb]);
  }
}

template <class T, class TO, class F>
static int run_binary(const Task& t, const F& f) {
  Geo g;
  g.rank = t.rank;
  g.abort = t.abort;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] == 0) return kOk;
    g.n[i] = t.shape[i];
    g.s[0][i] = t.s_out[i];
    g.s[1][i] = t.s_a[i];
    g.s[2][i] = t.s_b[i];
    g.s[3][i] = 0;
    g.red[i] = false;
  }
  canon(g, 3, 0);
  TO* o = reinterpret_cast<TO*>(t.out);
  const T* a = reinterpret_cast<const T*>(t.a);
  const T* b = reinterpret_cast<const T*>(t.b);
  if (g.rank == 0) {
    o[0] = f(a[0], b[0]);
    return kOk;
  }
  int rest[kMaxRank];
  int nrest = 0;
  for (int i = 1; i < g.rank; ++i) rest[nrest++] = i;
  const idx base[3] = {0, 0, 0};
  const idx n0 = g.n[0], so = g.s[0][0], sa = g.s[1][0], sb = g.s[2][0];
  idx total = 1;
  for (int i = 0; i < g.rank; ++i) total *= g.n[i];
  const bool nt = so == 1 && sa == 1 && sb == 1 && total * static_cast<idx>(sizeof(TO)) >= kNonTemporalBytes;
  const bool stopped = odometer<3>(g, rest, nrest, base, [&](const idx* off) {
    for (idx i = 0; i < n0 && !raised(g.abort); i += kPollElements) {
      binary_row<T, TO>(std::min(kPollElements, n0 - i), o + off[0] + i * so, so, a + off[1] + i * sa, sa, b + off[2] + i * sb, sb, f, nt);
    }
  });
#if defined(__x86_64__)
  if (nt) _mm_sfence();  // the lines are globally visible before the task reports completion
#endif
  return stopped ? kAborted : kOk;
}

// ---------------------------------------------------------------------------------------------
// Reductions. A policy P has: State; init(); fold(State&, TI, lin); merge(State&, const State&)
// (the second holds later rows); put(TO*, const State&, count).
template <class T> struct Wide { using type = T; };
template <> struct Wide<float> { using type = double; };
template <> struct Wide<Cx<float>> { using type = Cx<double>; };
template <> struct Wide<int32_t> { using type = uint32_t; };
template <> struct Wide<int64_t> { using type = uint64_t; };

template <class TI, class TO, int Op>
struct Red {
  static constexpr bool kCplx = IsCx<TI>::value;
  static constexpr bool kAdditive = Op == kSum || Op == kMean || Op == kNorm;
  using W = typename std::conditional<Op == kNorm, double, typename Wide<TI>::type>::type;
  struct Arg {
    TI v;
    idx i;
    bool any;
  };
  using State = typename std::conditional<(Op == kArgmax || Op == kArgmin), Arg, typename std::conditional<(Op == kMax || Op == kMin), TI, W>::type>::type;
  static constexpr bool kCxS = IsCx<State>::value;

  static inline State init() {
    if constexpr (Op == kArgmax || Op == kArgmin) return State{TI{}, 0, false};
    else if constexpr (Op == kMax) {
      if constexpr (kFloat<TI>) return -std::numeric_limits<TI>::infinity();
      else return std::numeric_limits<TI>::min();
    } else if constexpr (Op == kMin) {
      if constexpr (kFloat<TI>) return std::numeric_limits<TI>::infinity();
      else if constexpr (std::is_same<TI, b8>::value) return 1;
      else return std::numeric_limits<TI>::max();
    } else if constexpr (Op == kProd) {
      if constexpr (kCplx) return State{1, 0};
      else return State(1);
    } else {
      if constexpr (kCxS) return State{0, 0};
      else return State(0);
    }
  }
  // Whether (xv, xi) replaces (v, i): NaN wins (the first one), then the larger (smaller), then the first.
  static inline bool better(TI xv, idx xi, TI v, idx i) {
    const bool xn = isnan_(xv), vn = isnan_(v);
    if (vn) return xn && xi < i;
    if (xn) return true;
    if (Op == kArgmax ? xv > v : xv < v) return true;
    return xv == v && xi < i;
  }
  static inline void fold(State& s, TI x, idx lin) {
    (void)lin;
    if constexpr (Op == kArgmax || Op == kArgmin) {
      if (!s.any || better(x, lin, s.v, s.i)) s = State{x, lin, true};
    } else if constexpr (Op == kMax || Op == kMin) {
      if (isnan_(s)) return;
      if constexpr (std::is_same<TI, b8>::value) x = x != 0;
      if (isnan_(x) || (Op == kMax ? x > s : x < s)) {
        s = x;
      } else if constexpr (kFloat<TI>) {
        if (x == s && std::signbit(s) != std::signbit(x) && (Op == kMax ? std::signbit(s) : std::signbit(x))) s = x;  // −0 < +0
      }
    } else if constexpr (Op == kNorm) {
      if constexpr (kCplx) s += static_cast<double>(x.re) * x.re + static_cast<double>(x.im) * x.im;
      else s += static_cast<double>(x) * static_cast<double>(x);
    } else if constexpr (Op == kProd) {
      if constexpr (kCplx) {
        const double r = s.re * x.re - s.im * x.im, i = s.re * x.im + s.im * x.re;
        s.re = r;
        s.im = i;
      } else if constexpr (kInt<TI>) {
        s = static_cast<State>(s * static_cast<State>(x));
      } else {
        s = static_cast<State>(s * static_cast<State>(x));
      }
    } else {
      if constexpr (kCplx) {
        s.re += x.re;
        s.im += x.im;
      } else {
        s = static_cast<State>(s + static_cast<State>(x));
      }
    }
  }
  static inline void merge(State& s, const State& t) {
    if constexpr (Op == kArgmax || Op == kArgmin) {
      if (t.any && (!s.any || better(t.v, t.i, s.v, s.i))) s = t;
    } else if constexpr (Op == kMax || Op == kMin) {
      fold(s, t, 0);
    } else if constexpr (Op == kProd) {
      if constexpr (kCplx) {
        const double r = s.re * t.re - s.im * t.im, i = s.re * t.im + s.im * t.re;
        s.re = r;
        s.im = i;
      } else {
        s = static_cast<State>(s * t);
      }
    } else {
      if constexpr (kCxS) {
        s.re += t.re;
        s.im += t.im;
      } else {
        s = static_cast<State>(s + t);
      }
    }
  }
  static inline void put(TO* o, const State& s, idx count) {
    if constexpr (Op == kArgmax || Op == kArgmin) {
      *o = s.i;
    } else if constexpr (Op == kNorm) {
      *o = static_cast<TO>(std::sqrt(s));
    } else if constexpr (Op == kMean) {
      const double c = static_cast<double>(count);
      if constexpr (kCplx) *o = TO{static_cast<decltype(o->re)>(s.re / c), static_cast<decltype(o->re)>(s.im / c)};
      else *o = static_cast<TO>(s / c);
    } else if constexpr (kCplx) {
      *o = TO{static_cast<decltype(o->re)>(s.re), static_cast<decltype(o->re)>(s.im)};
    } else {
      *o = static_cast<TO>(s);
    }
  }
};

constexpr idx kLeaf = 128;   // elements folded sequentially (in kLanes independent lanes) before pairwise combination
constexpr int kLanes = 8;
constexpr idx kChunk = 4096; // outputs folded at once when the innermost axis is kept (a 4096-wide f64 row is read whole, sequentially)
constexpr idx kLeafRows = 8; // rows folded sequentially before pairwise combination (kept innermost axis)
constexpr int kLevels = 64;

// One run of n elements (stride sa, index weight w from lin0), folded pairwise into s.
template <class P, class TI>
static void fold_run(typename P::State& s, const TI* a, idx n, idx sa, idx lin0, idx w) {
  if (n > kLeaf) {
    const idx h = n / 2;
    fold_run<P>(s, a, h, sa, lin0, w);
    typename P::State t = P::init();
    fold_run<P>(t, a + h * sa, n - h, sa, lin0 + h * w, w);
    P::merge(s, t);
    return;
  }
  if constexpr (P::kAdditive && !P::kCplx) {
    if (sa == 1 && n >= kLanes) {
      typename P::State lane[kLanes];
      for (int k = 0; k < kLanes; ++k) lane[k] = P::init();
      idx i = 0;
      for (; i + kLanes <= n; i += kLanes) {
        for (int k = 0; k < kLanes; ++k) P::fold(lane[k], a[i + k], 0);
      }
      for (; i < n; ++i) P::fold(lane[0], a[i], 0);
      typename P::State t = P::init();
      for (int k = 0; k < kLanes; ++k) P::merge(t, lane[k]);
      P::merge(s, t);
      return;
    }
  }
  for (idx i = 0; i < n; ++i) P::fold(s, a[i * sa], lin0 + i * w);
}

template <class TI, class TO, class P>
static int run_reduce(const Task& t) {
  Geo g;
  g.rank = t.rank;
  g.abort = t.abort;
  idx count = 1;
  bool empty_out = false;
  for (int i = 0; i < t.rank; ++i) {
    g.n[i] = t.shape[i];
    g.red[i] = t.reduced[i];
    g.s[0][i] = t.reduced[i] ? 0 : t.s_out[i];
    g.s[1][i] = t.s_a[i];
    g.s[2][i] = 0;
    g.s[3][i] = 0;
    if (t.reduced[i]) {
      g.s[2][i] = count;  // column-major index over the reduced axes (the first fastest)
      count *= t.shape[i];
    } else if (t.shape[i] == 0) {
      empty_out = true;
    }
  }
  if (empty_out) return kOk;
  TO* o = reinterpret_cast<TO*>(t.out);
  const TI* a = reinterpret_cast<const TI*>(t.a);
  if (count == 0) {
    // Nothing to fold: every output gets the identity.
    for (int i = 0; i < g.rank; ++i) {
      if (g.red[i]) g.n[i] = 1;
    }
    canon(g, 1, 0);
    int axes[kMaxRank];
    for (int i = 0; i < g.rank; ++i) axes[i] = i;
    const idx base[1] = {0};
    return odometer<1>(g, axes, g.rank, base, [&](const idx* off) { P::put(o + off[0], P::init(), 0); }) ? kAborted : kOk;
  }
  canon(g, 3, 1);
  int kept[kMaxRank], red[kMaxRank];
  int nk = 0, nr = 0;
  for (int i = 0; i < g.rank; ++i) (g.red[i] ? red[nr++] : kept[nk++]) = i;
  // Row r (0 ≤ r < rows) of the reduced axes `ax[0..n)`: its source offset and reduced index.
  auto unravel = [&](const int* ax, int n, idx r, idx* off, idx* lin) {
    idx o1 = 0, l = 0;
    for (int q = 0; q < n; ++q) {
      const idx e = g.n[ax[q]];
      const idx c = r % e;
      r /= e;
      o1 += c * g.s[1][ax[q]];
      l += c * g.s[2][ax[q]];
    }
    *off = o1;
    *lin = l;
  };
  const idx base[3] = {0, 0, 0};
  if (g.rank == 0 || g.red[0]) {
    // The innermost axis is reduced (or everything is one element): per output, rows pairwise.
    const idx n0 = g.rank == 0 ? 1 : g.n[0];
    const idx sa0 = g.rank == 0 ? 0 : g.s[1][0];
    const idx w0 = g.rank == 0 ? 0 : g.s[2][0];
    const int* outer = red + (g.rank == 0 ? 0 : 1);
    const int nouter = g.rank == 0 ? 0 : nr - 1;
    idx rows = 1;
    for (int q = 0; q < nouter; ++q) rows *= g.n[outer[q]];
    struct Rec {
      const TI* a;
      idx n0, sa0, w0;
      const int* outer;
      int nouter;
      decltype(unravel)& unr;
      void go(typename P::State& s, idx lo, idx hi) const {
        if (hi - lo == 1) {
          idx off = 0, lin = 0;
          unr(outer, nouter, lo, &off, &lin);
          fold_run<P>(s, a + off, n0, sa0, lin, w0);
          return;
        }
        const idx mid = lo + (hi - lo) / 2;
        go(s, lo, mid);
        typename P::State t2 = P::init();
        go(t2, mid, hi);
        P::merge(s, t2);
      }
    };
    return odometer<3>(g, kept, nk, base, [&](const idx* off) {
      Rec rec{a + off[1], n0, sa0, w0, outer, nouter, unravel};
      typename P::State s = P::init();
      rec.go(s, 0, rows);
      P::put(o + off[0], s, count);
    }) ? kAborted : kOk;
  }
  // The innermost axis is kept: kChunk outputs at once, every reduced row folded into them.
  using S = typename P::State;
  idx rows = 1;
  for (int q = 0; q < nr; ++q) rows *= g.n[red[q]];
  const idx n0 = g.n[0], so0 = g.s[0][0], sa0 = g.s[1][0];
  // One accumulator row of `width` states per level of the pairwise tree the rows need (halving
  // down to kLeafRows), capped at kLevels.
  const idx width = std::min(kChunk, n0);
  int levels = 2;
  for (idx r = rows; r > kLeafRows && levels < kLevels; r = r - r / 2) ++levels;
  S* stack = static_cast<S*>(scratch(sizeof(S) * static_cast<std::size_t>(width) * static_cast<std::size_t>(levels + 1)));
  if (stack == nullptr) return kNoMemory;
  struct RecB {
    const TI* a;
    idx sa0;
    const int* red;
    int nr;
    S* stack;
    idx width;
    int max_level;
    decltype(unravel)& unr;
    void go(S* acc, idx cw, idx lo, idx hi, int level) const {
      if (hi - lo <= kLeafRows || level >= max_level) {
        if (sa0 == 1 && hi - lo == kLeafRows) {
          // A whole leaf of unit-stride rows: each output's kLeafRows values folded in a
          // register, in row order (the same sums as row after row into acc), and stored once —
          // one pass over acc instead of kLeafRows read-modify-write passes.
          const TI* rp[kLeafRows];
          idx ln[kLeafRows];
          for (idx k = 0; k < kLeafRows; ++k) {
            idx off = 0;
            unr(red, nr, lo + k, &off, &ln[k]);
            rp[k] = a + off;
          }
          static_assert(kLeafRows == 8, "the unrolled leaf folds 8 rows");
          const TI* __restrict p0 = rp[0];
          const TI* __restrict p1 = rp[1];
          const TI* __restrict p2 = rp[2];
          const TI* __restrict p3 = rp[3];
          const TI* __restrict p4 = rp[4];
          const TI* __restrict p5 = rp[5];
          const TI* __restrict p6 = rp[6];
          const TI* __restrict p7 = rp[7];
          S* __restrict out = acc;
          for (idx w = 0; w < cw; ++w) {
            S v = P::init();
            P::fold(v, p0[w], ln[0]);
            P::fold(v, p1[w], ln[1]);
            P::fold(v, p2[w], ln[2]);
            P::fold(v, p3[w], ln[3]);
            P::fold(v, p4[w], ln[4]);
            P::fold(v, p5[w], ln[5]);
            P::fold(v, p6[w], ln[6]);
            P::fold(v, p7[w], ln[7]);
            out[w] = v;
          }
          return;
        }
        for (idx w = 0; w < cw; ++w) acc[w] = P::init();
        for (idx r = lo; r < hi; ++r) {
          idx off = 0, lin = 0;
          unr(red, nr, r, &off, &lin);
          const TI* __restrict p = a + off;
          if (sa0 == 1) {
            for (idx w = 0; w < cw; ++w) P::fold(acc[w], p[w], lin);
          } else {
            for (idx w = 0; w < cw; ++w) P::fold(acc[w], p[w * sa0], lin);
          }
        }
        return;
      }
      const idx mid = lo + (hi - lo) / 2;
      go(acc, cw, lo, mid, level + 1);
      S* tmp = stack + static_cast<idx>(level + 1) * width;
      go(tmp, cw, mid, hi, level + 1);
      for (idx w = 0; w < cw; ++w) P::merge(acc[w], tmp[w]);
    }
  };
  return odometer<3>(g, kept + 1, nk - 1, base, [&](const idx* off) {
    for (idx c0 = 0; c0 < n0; c0 += width) {
      if (raised(g.abort)) return;
      const idx cw = std::min(width, n0 - c0);
      RecB rec{a + off[1] + c0 * sa0, sa0, red, nr, stack, width, levels - 1, unravel};
      rec.go(stack, cw, 0, rows, 0);
      for (idx w = 0; w < cw; ++w) P::put(o + off[0] + (c0 + w) * so0, stack[w], count);
    }
  }) ? kAborted : kOk;
}

// ---------------------------------------------------------------------------------------------
// Dispatch: which (kind, op, din, dout) have kernels. With Exec false only the answer is given.
template <bool Exec, int Op, class TI, class TO>
static inline int un(const Task* t) {
  if constexpr (!Exec) return kOk;
  else return run_unary<TI, TO>(*t, UnaryFn<Op, TI, TO>{t->alpha_re, t->alpha_im});
}

template <bool Exec, class TI>
static int cast_to(const Task* t, int dout) {
  switch (dout) {
    case kF32: return un<Exec, kCast, TI, float>(t);
    case kF64: return un<Exec, kCast, TI, double>(t);
    case kC64: return un<Exec, kCast, TI, Cx<float>>(t);
    case kC128: return un<Exec, kCast, TI, Cx<double>>(t);
    case kI32: return un<Exec, kCast, TI, int32_t>(t);
    case kI64: return un<Exec, kCast, TI, int64_t>(t);
    case kBool: return un<Exec, kCast, TI, b8>(t);
    default: return kBadDtype;
  }
}

template <bool Exec, int D>
static int unary_of(const Task* t, int op, int dout) {
  using T = typename DT<D>::type;
  constexpr bool cplx = D == kC64 || D == kC128;
  constexpr bool flt = D == kF32 || D == kF64;
  constexpr bool integer = D == kI32 || D == kI64;
  constexpr int real_of = D == kC64 ? kF32 : D == kC128 ? kF64 : D;
  using R = typename DT<real_of>::type;
  if (op == kCast) return cast_to<Exec, T>(t, dout);
  if (op == kAbs || op == kReal || op == kImag) {
    if (dout != real_of || D == kBool) return kBadDtype;
    if constexpr (D != kBool) {
      if (op == kAbs) return un<Exec, kAbs, T, R>(t);
      if (op == kReal) return un<Exec, kReal, T, R>(t);
      return un<Exec, kImag, T, R>(t);
    }
    return kBadDtype;
  }
  if (dout != D) return kBadDtype;
  switch (op) {
    case kCopy: return un<Exec, kCopy, T, T>(t);
    case kCopyConj: return un<Exec, kCopyConj, T, T>(t);
    default: break;
  }
  if constexpr (cplx || flt || integer) {
    switch (op) {
      case kNeg: return un<Exec, kNeg, T, T>(t);
      case kConj: return un<Exec, kConj, T, T>(t);
      case kScale: return un<Exec, kScale, T, T>(t);
      default: break;
    }
  }
  if constexpr (cplx || flt) {
    switch (op) {
      case kExp: return un<Exec, kExp, T, T>(t);
      case kLog: return un<Exec, kLog, T, T>(t);
      case kSqrt: return un<Exec, kSqrt, T, T>(t);
      case kSin: return un<Exec, kSin, T, T>(t);
      case kCos: return un<Exec, kCos, T, T>(t);
      case kTanh: return un<Exec, kTanh, T, T>(t);
      case kScale: return un<Exec, kScale, T, T>(t);
      default: break;
    }
  }
  return kBadDtype;
}

template <bool Exec, int Op, class T>
static inline int bin(const Task* t) {
  if constexpr (!Exec) return kOk;
  else return run_binary<T, typename BinaryFn<Op, T>::TO>(*t, BinaryFn<Op, T>{});
}

template <bool Exec, int D>
static int binary_of(const Task* t, int op, int dout) {
  using T = typename DT<D>::type;
  constexpr bool cplx = D == kC64 || D == kC128;
  constexpr bool flt = D == kF32 || D == kF64;
  constexpr bool integer = D == kI32 || D == kI64;
  if (op >= kEq ? dout != kBool : dout != D) return kBadDtype;
  if (op == kEq) return bin<Exec, kEq, T>(t);
  if constexpr (flt || integer || D == kBool) {
    switch (op) {
      case kMaximum: return bin<Exec, kMaximum, T>(t);
      case kMinimum: return bin<Exec, kMinimum, T>(t);
      case kLt: return bin<Exec, kLt, T>(t);
      case kLe: return bin<Exec, kLe, T>(t);
      case kGt: return bin<Exec, kGt, T>(t);
      case kGe: return bin<Exec, kGe, T>(t);
      default: break;
    }
  }
  if constexpr (flt || integer || cplx) {
    switch (op) {
      case kAdd: return bin<Exec, kAdd, T>(t);
      case kSub: return bin<Exec, kSub, T>(t);
      case kMul: return bin<Exec, kMul, T>(t);
      case kDiv: return bin<Exec, kDiv, T>(t);
      default: break;
    }
  }
  if constexpr (flt || cplx) {
    if (op == kPow) return bin<Exec, kPow, T>(t);
  }
  return kBadDtype;
}

template <bool Exec, int Op, class TI, class TO>
static inline int red(const Task* t) {
  if constexpr (!Exec) return kOk;
  else return run_reduce<TI, TO, Red<TI, TO, Op>>(*t);
}

template <bool Exec, int D>
static int reduce_of(const Task* t, int op, int dout) {
  using T = typename DT<D>::type;
  constexpr bool cplx = D == kC64 || D == kC128;
  constexpr bool flt = D == kF32 || D == kF64;
  constexpr bool integer = D == kI32 || D == kI64;
  constexpr int real_of = D == kC64 ? kF32 : D == kC128 ? kF64 : D;
  using R = typename DT<real_of>::type;
  if (op == kArgmax || op == kArgmin) {
    if (dout != kI64) return kBadDtype;
    if constexpr (flt || integer || D == kBool) return op == kArgmax ? red<Exec, kArgmax, T, int64_t>(t) : red<Exec, kArgmin, T, int64_t>(t);
    return kBadDtype;
  }
  if (op == kNorm) {
    if (dout != real_of) return kBadDtype;
    if constexpr (flt || cplx) return red<Exec, kNorm, T, R>(t);
    return kBadDtype;
  }
  if (dout != D) return kBadDtype;
  if constexpr (flt || integer || D == kBool) {
    if (op == kMax) return red<Exec, kMax, T, T>(t);
    if (op == kMin) return red<Exec, kMin, T, T>(t);
  }
  if constexpr (flt || integer || cplx) {
    if (op == kSum) return red<Exec, kSum, T, T>(t);
    if (op == kProd) return red<Exec, kProd, T, T>(t);
  }
  if constexpr (flt || cplx) {
    if (op == kMean) return red<Exec, kMean, T, T>(t);
  }
  return kBadDtype;
}

template <bool Exec, int D>
static inline int kind_of(const Task* t, int kind, int op, int dout) {
  switch (kind) {
    case kUnary: return unary_of<Exec, D>(t, op, dout);
    case kBinary: return binary_of<Exec, D>(t, op, dout);
    case kReduce: return reduce_of<Exec, D>(t, op, dout);
    default: return kBadDtype;
  }
}

template <bool Exec>
static int dispatch(const Task* t, int kind, int op, int din, int dout) {
  switch (din) {
    case kF32: return kind_of<Exec, kF32>(t, kind, op, dout);
    case kF64: return kind_of<Exec, kF64>(t, kind, op, dout);
    case kC64: return kind_of<Exec, kC64>(t, kind, op, dout);
    case kC128: return kind_of<Exec, kC128>(t, kind, op, dout);
    case kI32: return kind_of<Exec, kI32>(t, kind, op, dout);
    case kI64: return kind_of<Exec, kI64>(t, kind, op, dout);
    case kBool: return kind_of<Exec, kBool>(t, kind, op, dout);
    default: return kBadDtype;
  }
}

static int run(const Task& t) { return dispatch<true>(&t, t.kind, t.op, t.din, t.dout); }
static bool supports(int kind, int op, int din, int dout) { return dispatch<false>(nullptr, kind, op, din, dout) == kOk; }
