{
  "targets": [
    {
      "target_name": "tenferro_linalg",
      "sources": [
        "src/addon.cc",
        "src/shapes.cc",
        "src/ops_f32.cc",
        "src/ops_f64.cc",
        "src/ops_c64.cc",
        "src/ops_c128.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<!(node eigen-include.cjs)"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "EIGEN_DONT_PARALLELIZE",
        "EIGEN_MPL2_ONLY"
      ],
      "cflags!": ["-O2", "-O0", "-fno-omit-frame-pointer"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-O2", "-O0", "-fno-omit-frame-pointer"],
      "cflags": ["-O3", "-Wall", "-Wextra", "-fno-math-errno"],
      "cflags_cc": ["-O3", "-std=c++17", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra", "-Wno-unused-function", "-Wno-deprecated-copy", "-Wno-class-memaccess", "-fno-math-errno"]
    }
  ]
}
