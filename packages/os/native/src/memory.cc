// @tenferro/os native binding: where a typed array's memory lives (registered in addon.cc).
//
//   typedArrayRange(view: Uint8Array): { address: bigint, byteLength: number } | null
//   adjustExternalMemory(deltaBytes: number): number
//   adviseHugePages(view: Uint8Array): number
//
// N-API has no call for a SharedArrayBuffer's backing store on Node 20: napi_get_arraybuffer_info
// and napi_is_arraybuffer answer only for ArrayBuffer (a SharedArrayBuffer is napi_invalid_arg /
// false). napi_get_typedarray_info does work for a typed array over a SharedArrayBuffer and
// gives the data pointer (the backing store plus the view's byte offset), so src/memory.ts views
// the whole SharedArrayBuffer with `new Uint8Array(sab)` and asks for that view's range. Two
// SharedArrayBuffer objects that share one backing store (e.g. one sent to a worker and back)
// give the same address; distinct ones give disjoint ranges.
//
// Nothing throws: anything but a Uint8Array answers null.
#include <napi.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>

#include "os_addon.h"
#include "tenferro/napi_args.h"

namespace os {
namespace js {

Napi::Value typed_array_range(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t length = 0;
  void* data = nullptr;
  if (info.Length() < 1 || !tenferro::napi_args::typed(info[0], napi_uint8_array, &data, &length)) return env.Null();
  // A zero-length view may have no memory behind it: report address 0 (it reaches nothing).
  const uint64_t address = length == 0 ? 0 : static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
  Napi::Object result = Napi::Object::New(env);
  result.Set("address", Napi::BigInt::New(env, address));
  result.Set("byteLength", Napi::Number::New(env, static_cast<double>(length)));
  return result;
}

/**
 * Tell V8 that `deltaBytes` of memory outside its heap are kept alive by (collectable) JavaScript
 * objects, or no longer are (negative): V8 does not count SharedArrayBuffer backing stores towards
 * its collection heuristics, so without this a loop that drops large tensors never collects them.
 * Answers V8's new total; anything but a finite integer of magnitude below 2^53 is ignored (0).
 */
Napi::Value adjust_external_memory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return Napi::Number::New(env, 0);
  const double d = info[0].As<Napi::Number>().DoubleValue();
  if (!tenferro::napi_args::is_int(d, -9007199254740991.0, 9007199254740991.0)) return Napi::Number::New(env, 0);
  int64_t total = 0;
  if (napi_adjust_external_memory(env, static_cast<int64_t>(d), &total) != napi_ok) return Napi::Number::New(env, 0);
  return Napi::Number::New(env, static_cast<double>(total));
}

/** Transparent huge pages are 2 MiB on x86-64 and on arm64 with 4 KiB base pages. */
constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

/**
 * `madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of a Uint8Array's memory: from its first
 * 2 MiB boundary at or after the view's start to its last at or before its end (#38). Memory
 * outside that range is never advised, so advice cannot make the kernel back a byte the view
 * does not cover. Answers the bytes advised (0 when the view spans no whole 2 MiB page), or
 * -errno: -EINVAL for anything but a Uint8Array, -EOVERFLOW when the range wraps, -ENOSYS where
 * MADV_HUGEPAGE does not exist, madvise's errno otherwise (EINVAL where THP is compiled out).
 * Nothing throws.
 */
Napi::Value advise_huge_pages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto answer = [&env](double v) { return Napi::Number::New(env, v); };
  size_t length = 0;
  void* data = nullptr;
  if (info.Length() < 1 || !tenferro::napi_args::typed(info[0], napi_uint8_array, &data, &length)) return answer(-EINVAL);
  if (length == 0 || data == nullptr) return answer(0);
  const uintptr_t start = reinterpret_cast<uintptr_t>(data);
  uintptr_t end = 0;
  uintptr_t rounded = 0;
  if (__builtin_add_overflow(start, length, &end) || __builtin_add_overflow(start, kHugePage - 1, &rounded)) return answer(-EOVERFLOW);
  const uintptr_t lo = rounded & ~(kHugePage - 1);
  const uintptr_t hi = end & ~(kHugePage - 1);
  if (hi <= lo) return answer(0);
#ifdef MADV_HUGEPAGE
  if (madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) != 0) return answer(-static_cast<double>(errno));
  return answer(static_cast<double>(hi - lo));
#else
  return answer(-ENOSYS);
#endif
}

}  // namespace js
}  // namespace os
