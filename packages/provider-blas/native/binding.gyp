{
  "targets": [
    {
      "target_name": "tenferro_blas",
      "sources": ["src/addon.cc", "src/gemm.cc", "src/runtime.cc", "src/lapack.cc", "src/fork_guard.cc"],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!(node -p \"require('@tenferro/native').includeDir\")"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "_GNU_SOURCE"
      ],
      "libraries": [
        "-ldl",
        "-lpthread"
      ],
      "cflags!": ["-O3", "-O0"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-O3", "-O0"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "cflags_cc": ["-O2", "-std=c++17", "-fno-exceptions", "-Wall", "-Wextra"]
    }
  ]
}
