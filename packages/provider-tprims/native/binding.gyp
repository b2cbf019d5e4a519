{
  # tenferro_avx512=0 / tenferro_avx2=0 (node-gyp rebuild -- -Dtenferro_avx512=0; @tenferro/native-build
  # passes them from TENFERRO_NATIVE_ISA: `host` on a CPU without AVX-512, `best` on one with it,
  # packages/native-build/isa-paths.mjs) leave the AVX-512 or AVX2 engine out.
  "variables": {
    "tenferro_avx2%": 1,
    "tenferro_avx512%": 1
  },
  "targets": [
    {
      "target_name": "tenferro_tprims",
      "sources": [
        "src/addon.cc",
        "src/entry.cc",
        "src/info.cc",
        "src/dispatch.cc",
        "src/kernels_scalar.cc"
      ],
      "conditions": [
        ["tenferro_avx2==1", { "sources": ["src/kernels_avx2.cc"] }, { "defines": ["TENFERRO_NO_AVX2"] }],
        ["tenferro_avx512==1", { "sources": ["src/kernels_avx512.cc"] }, { "defines": ["TENFERRO_NO_AVX512"] }]
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!(node -p \"require('@tenferro/native').includeDir\")",
        "include"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      # -O2 with GCC's full vectorisation cost model, not -O3 (#39): -O3's larger inlining and loop
      # versioning made each engine path 2.8 MB of code and ~130 s of compile (avx2, g++ 12); -O2
      # gives 1.5 MB in ~55 s, and `bench/run.mjs` (3 interleaved runs against the C anchors) and
      # the compute-bound unary/binary ops ran the same or faster. The one loss, the avx2 8x8
      # transpose block (0.79 of memcpy against 0.89), came from loops -O2 kept: they are unrolled
      # by pragma (include/tprims_engine.h), and it now runs 1.00-1.04.
      "cflags!": ["-O3", "-O0", "-fno-omit-frame-pointer"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-O3", "-O0", "-fno-omit-frame-pointer"],
      "cflags": ["-O2", "-fvect-cost-model=dynamic", "-Wall", "-Wextra", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off", "-fno-semantic-interposition"],
      "cflags_cc": ["-O2", "-fvect-cost-model=dynamic", "-std=c++17", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra", "-Wno-unused-function", "-fno-math-errno", "-fno-trapping-math", "-ffp-contract=off"]
    }
  ]
}
