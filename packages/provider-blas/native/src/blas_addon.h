// @tenferro/provider-blas: the status codes and the N-API callbacks that addon.cc registers,
// one per export, each defined in the file named after what it serves. None throws: failures
// are status codes, turned into errors in TypeScript.
#pragma once

#include <stdint.h>

#include <napi.h>

#include "abi.generated.h"

namespace blas {

// Status codes (kStatusOk ...): native/src/abi.mjs, shared with src/native/binding.ts (#40),
// through abi.generated.h.

namespace js {

/** `gemm(desc, a, b, c)`: one strided-batched column-major ?gemm; a status (gemm.cc). */
Napi::Value gemm(const Napi::CallbackInfo& info);
/** `load(request)`: dlopen the BLAS runtime, once per process; what it did (runtime.cc). */
Napi::Value load(const Napi::CallbackInfo& info);
/** `info()`: the runtime's identity (runtime.cc). */
Napi::Value info(const Napi::CallbackInfo& info);
/** `getThreads()`: the runtime's thread count, -1 when it has none (runtime.cc). */
Napi::Value get_threads(const Napi::CallbackInfo& info);
/** `callThreads()`: tids of the threads the runtime started during calls (MKL's OpenMP teams), for the census (runtime.cc). */
Napi::Value call_threads(const Napi::CallbackInfo& info);
/** `setThreads(n)`: a status (runtime.cc). */
Napi::Value set_threads(const Napi::CallbackInfo& info);
/** `lapackSymbols()`: which LAPACK routines the loaded runtime exports, null before load (lapack.cc). */
Napi::Value lapack_symbols(const Napi::CallbackInfo& info);
/** `lapack(words, a, b, out0, out1, out2, info)`: one linalg primitive over a batch with the runtime's LAPACK; a status (lapack.cc). */
Napi::Value lapack_run(const Napi::CallbackInfo& info);

}  // namespace js
}  // namespace blas
