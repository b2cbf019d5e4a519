{
  "targets": [
    {
      "target_name": "tenferro_os",
      "sources": ["src/addon.cc", "src/affinity.cc", "src/memory.cc", "src/death_token.cc", "src/arbiter.cc", "src/arbiter_binding.cc", "src/machine_arbiter.cc", "src/machine_arbiter_binding.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")", "<!(node -p \"require('@tenferro/native').includeDir\")"],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "_GNU_SOURCE"
      ],
      "cflags!": ["-O3", "-O0"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-O3", "-O0"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-fvisibility=hidden"],
      "cflags_cc": ["-O2", "-std=c++17", "-fno-exceptions", "-Wall", "-Wextra", "-fvisibility=hidden", "-fvisibility-inlines-hidden"],
      "libraries": ["-ldl"],
      "ldflags": ["-Wl,--version-script=<(module_root_dir)/src/exports.map"]
    }
  ]
}
