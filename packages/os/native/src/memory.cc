// @tenferro/os native binding: where a typed array's memory lives (registered in addon.cc).
//
//   typedArrayRange(view: Uint8Array): { address: bigint, byteLength: number } | null
//   adjustExternalMemory(deltaBytes: number): number
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

#include <cstdint>

#include "os_addon.h"

namespace os {
namespace js {

Napi::Value typed_array_range(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray()) return env.Null();
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  napi_value arraybuffer;
  size_t byte_offset = 0;
  if (napi_get_typedarray_info(env, info[0], &type, &length, &data, &arraybuffer, &byte_offset) != napi_ok) return env.Null();
  if (type != napi_uint8_array) return env.Null();
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
  if (!(d > -9007199254740992.0 && d < 9007199254740992.0) || d != static_cast<double>(static_cast<int64_t>(d))) return Napi::Number::New(env, 0);
  int64_t total = 0;
  if (napi_adjust_external_memory(env, static_cast<int64_t>(d), &total) != napi_ok) return Napi::Number::New(env, 0);
  return Napi::Number::New(env, static_cast<double>(total));
}

}  // namespace js
}  // namespace os
