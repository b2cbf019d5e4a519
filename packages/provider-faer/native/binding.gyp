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
      "target_name": "tenferro_faer",
      "sources": [
        "src/addon.cc",
        "src/gemm.cc",
        "src/info.cc",
        "src/dispatch.cc",
        "src/gemm_kernel_scalar.cc"
      ],
      "conditions": [
        ["tenferro_avx2==1", { "sources": ["src/gemm_kernel_avx2.cc"] }, { "defines": ["TENFERRO_NO_AVX2"] }],
        ["tenferro_avx512==1", { "sources": ["src/gemm_kernel_avx512.cc"] }, { "defines": ["TENFERRO_NO_AVX512"] }]
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
      "cflags!": ["-O2", "-O0", "-fno-omit-frame-pointer"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-O2", "-O0", "-fno-omit-frame-pointer"],
      "cflags": ["-O3", "-Wall", "-Wextra", "-fno-math-errno", "-fno-trapping-math", "-fno-semantic-interposition"],
      # -fno-unswitch-loops: g++'s loop unswitching copied the engine's loops once per invariant
      # branch, 1.7x the AVX-512 unit's code and 45 % of its compile time (53 -> 29 CPU s; 117 -> 77
      # for the addon), with the kernels as fast without it (bench/small-vs-c.mjs, n = 32-128;
      # docs/performance.md, 2026-12-08).
      "cflags_cc": ["-O3", "-fno-unswitch-loops", "-std=c++17", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra", "-Wno-unused-function", "-fno-math-errno", "-fno-trapping-math"]
    }
  ]
}
