{
  # The sources are listed longest build first (make starts them in this order: the long
  # translation units do not end the build alone on one CPU, #39): the f64 units, which g++
  # compiles, then the complex and f32 ones, which clang++ compiles in half the time where it is
  # installed (cxx-select.cjs). c128's SVD retry in
  # complex<long double> is its own unit (src/ops_c128_wide.cc: ops_c128.cc took 135–146 CPU s
  # alone, then 58–75 + ~45 side by side; the retry now instantiates JacobiSVD alone, ~10 s).
  # The kernels (src/ops_*.cc) are compiled once per instruction set into static libraries —
  # baseline (x86-64 SSE2, or arm64), and on x64 the real types (f32, f64) also for AVX2+FMA and
  # AVX-512 (complex types: baseline only for now, a third less build time) — each with Eigen renamed
  # (-DEigen=tfl_eigen_<isa>) so that no inline function compiled for one set can replace another's
  # at link time; src/dispatch.cc picks one per process. Sanitizer builds (CXXFLAGS with -fsanitize,
  # packages/native-build/asan.mjs) compile the baseline only: the same source, a third of the build.
  # Where both vector libraries are built, the AVX-512 one leaves svd and eig out
  # (TFL_SVD_EIG_ON_AVX2; dispatch.cc runs those jobs on the AVX2 kernels, TFL_AVX512_SVD_EIG_ON_AVX2):
  # Eigen's BDCSVD and EigenSolver are ~70 % of a real unit's compile time (f64 at AVX-512: 50 CPU s,
  # 18 without them), and at n = 512 the AVX2 build runs them within 3–7 % of the AVX-512 one.
  # tenferro_avx512=0 / tenferro_avx2=0 (node-gyp rebuild -- -Dtenferro_avx512=0; @tenferro/native-build
  # passes them from TENFERRO_NATIVE_ISA: `host` on a CPU without AVX-512, `best` on one with it,
  # packages/native-build/isa-paths.mjs) leave the AVX-512 or AVX2 library out.
  # tenferro_portable=0 (TENFERRO_NATIVE_ISA=best on a CPU with AVX2 or AVX-512, isa-paths.mjs, #39)
  # leaves the baseline f32/f64 units (src/ops_f32.cc, src/ops_f64.cc of tenferro_linalg_generic) out
  # when a vector library of the real types is built: a CPU that runs that library never runs them,
  # and they are a third of the baseline's compile time (95 of 288 CPU s). It defines
  # TFL_NO_GENERIC_REAL: src/dispatch.cc then refuses f32/f64 jobs with kBadDtype on a CPU that runs
  # none of the built vector paths (or under TENFERRO_LINALG_ISA=generic), and info() reports them
  # in dtypesNotBuilt and notBuilt. With tenferro_linalg_f64_only=1 as well, the baseline library is
  # empty and left out.
  # tenferro_linalg_f64_only=1 (-Dtenferro_linalg_f64_only=1; the sanitizer build of
  # packages/native-build/asan.mjs, #39: the whole ASan build does not fit CI's time; and
  # TENFERRO_LINALG_DTYPES=f64 of scripts/build-native.mjs, `npm run demo`'s set-up) compiles the
  # f64 kernels only (src/ops_f64.cc) and defines TFL_F64_ONLY: src/dispatch.cc refuses f32, c64 and
  # c128 jobs with kBadDtype before anything is read or written, and info() reports them in
  # dtypesNotBuilt. The default (0) builds every dtype.
  # The compiler: cxx-select.cjs (clang++ for the f32 and complex kernel units when it is
  # installed, g++ for the rest; CXX in the environment wins). The command prints
  # "<node> <absolute path of cxx-select.cjs>".
  "make_global_settings": [
    ["CXX", "<!(node cxx-select.cjs --make-command)"]
  ],
  "variables": {
    "tfl_isas%": "<!(node -p \"/-fsanitize/.test(process.env.CXXFLAGS || '') ? 'baseline' : 'all'\")",
    "tenferro_avx2%": 1,
    "tenferro_avx512%": 1,
    "tenferro_portable%": 1,
    "tenferro_linalg_f64_only%": 0
  },
  "target_defaults": {
    "include_dirs": [
      "<!(node -p \"require('node-addon-api').include_dir\")",
      "<!(node -p \"require('@tenferro/native').includeDir\")",
      "<!(node eigen-include.cjs)"
    ],
    "defines": [
      "NAPI_VERSION=8",
      "NAPI_DISABLE_CPP_EXCEPTIONS",
      "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
      "NODE_ADDON_API_DISABLE_DEPRECATED",
      "EIGEN_DONT_PARALLELIZE",
      "EIGEN_MPL2_ONLY",
      "EIGEN_NO_DEBUG"
    ],
    "cflags!": ["-O2", "-O0", "-fno-omit-frame-pointer"],
    "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-O2", "-O0", "-fno-omit-frame-pointer"],
    "cflags": ["-O3", "-Wall", "-Wextra", "-fno-math-errno", "-fPIC"],
    "cflags_cc": ["-O3", "-std=c++17", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra", "-Wno-unused-function", "-Wno-deprecated-copy", "-Wno-class-memaccess", "-fno-math-errno", "-fPIC"]
  },
  "targets": [
    {
      "target_name": "tenferro_linalg",
      "sources": ["src/addon.cc", "src/shapes.cc", "src/dispatch.cc"],
      "conditions": [
        # The baseline library is empty (and left out) when both reductions apply.
        # The AVX2 library first: its ops_f64.cc (g++) is the longest unit of the build.
        ["target_arch=='x64' and tfl_isas=='all' and tenferro_avx2==1", {
          "dependencies": ["tenferro_linalg_avx2"],
          "defines": ["TFL_HAVE_AVX2"]
        }, {
          "defines": ["TENFERRO_NO_AVX2"]
        }],
        ["not (tenferro_linalg_f64_only==1 and target_arch=='x64' and tfl_isas=='all' and tenferro_portable==0 and (tenferro_avx2==1 or tenferro_avx512==1))", {
          "dependencies": ["tenferro_linalg_generic"]
        }],
        ["target_arch=='x64' and tfl_isas=='all' and tenferro_avx512==1", {
          "dependencies": ["tenferro_linalg_avx512"],
          "defines": ["TFL_HAVE_AVX512"]
        }, {
          "defines": ["TENFERRO_NO_AVX512"]
        }],
        ["target_arch=='x64' and tfl_isas=='all' and tenferro_avx512==1 and tenferro_avx2==1", {
          "defines": ["TFL_AVX512_SVD_EIG_ON_AVX2"]
        }],
        ["target_arch=='x64' and tfl_isas=='all' and tenferro_portable==0 and (tenferro_avx2==1 or tenferro_avx512==1)", {
          "defines": ["TFL_NO_GENERIC_REAL"]
        }],
        ["tenferro_linalg_f64_only==1", {
          "defines": ["TFL_F64_ONLY"]
        }]
      ]
    }
  ],
  "conditions": [
    ["not (tenferro_linalg_f64_only==1 and target_arch=='x64' and tfl_isas=='all' and tenferro_portable==0 and (tenferro_avx2==1 or tenferro_avx512==1))", {
      "targets": [
        {
          "target_name": "tenferro_linalg_generic",
          "type": "static_library",
          "sources": ["src/ops_f64.cc", "src/ops_c64.cc", "src/ops_c128.cc", "src/ops_f32.cc", "src/ops_c128_wide.cc"],
          "defines": ["TFL_ISA=generic", "Eigen=tfl_eigen_generic"],
          "conditions": [
            ["tenferro_linalg_f64_only==1", {
              "sources!": ["src/ops_c128.cc", "src/ops_c64.cc", "src/ops_f32.cc", "src/ops_c128_wide.cc"]
            }],
            ["target_arch=='x64' and tfl_isas=='all' and tenferro_portable==0 and (tenferro_avx2==1 or tenferro_avx512==1)", {
              "sources!": ["src/ops_f32.cc", "src/ops_f64.cc"]
            }]
          ]
        }
      ]
    }],
    ["target_arch=='x64' and tfl_isas=='all' and tenferro_avx2==1", {
      "targets": [
        {
          "target_name": "tenferro_linalg_avx2",
          "type": "static_library",
          "sources": ["src/ops_f64.cc", "src/ops_f32.cc"],
          "defines": ["TFL_ISA=avx2", "Eigen=tfl_eigen_avx2"],
          "conditions": [
            ["tenferro_linalg_f64_only==1", {
              "sources!": ["src/ops_f32.cc"]
            }]
          ],
          "cflags": ["-mavx2", "-mfma"]
        }
      ]
    }],
    ["target_arch=='x64' and tfl_isas=='all' and tenferro_avx512==1", {
      "targets": [
        {
          "target_name": "tenferro_linalg_avx512",
          "type": "static_library",
          "sources": ["src/ops_f64.cc", "src/ops_f32.cc"],
          "defines": ["TFL_ISA=avx512", "Eigen=tfl_eigen_avx512"],
          "conditions": [
            ["tenferro_linalg_f64_only==1", {
              "sources!": ["src/ops_f32.cc"]
            }],
            ["tenferro_avx2==1", {
              "defines": ["TFL_SVD_EIG_ON_AVX2"]
            }]
          ],
          "cflags": ["-mavx512f", "-mavx512dq", "-mavx512bw", "-mavx512vl", "-mavx2", "-mfma", "-Wno-maybe-uninitialized"]
        }
      ]
    }]
  ]
}
