// tenferro/napi_args.h — reading a native call's arguments the way every tenferro addon must
// (#40): typed-array views (SharedArrayBuffer-backed ones too: napi_get_typedarray_info returns
// their data), exact-integer indices in [0, 2^53], and reach checks in __int128 that cannot
// overflow. Header-only, C++17, node-addon-api.
#ifndef TENFERRO_NAPI_ARGS_H_
#define TENFERRO_NAPI_ARGS_H_

#include <napi.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "tenferro/isa.h"

namespace tenferro {
namespace napi_args {

// 2^53: every integer up to it is an exact double; no index, extent or stride may exceed it.
constexpr double kMaxSafeIndex = 9007199254740992.0;

// `v` as an index when it is an integer in [0, 2^53] (not NaN, infinite, fractional or negative).
// In that range the conversion is exact for integers and truncates fractions: converting back
// tells them apart without std::floor (a libm call on baseline x86-64).
inline bool as_index(double v, int64_t* out) {
  if (!(v >= 0 && v <= kMaxSafeIndex)) return false;
  const int64_t i = static_cast<int64_t>(v);
  if (static_cast<double>(i) != v) return false;
  *out = i;
  return true;
}

// Whether `x` is a finite integer in [lo, hi].
inline bool is_int(double x, double lo, double hi) { return std::isfinite(x) && std::floor(x) == x && x >= lo && x <= hi; }

// Bytes per element of a typed array type.
inline std::size_t element_bytes(napi_typedarray_type type) {
  switch (type) {
    case napi_int16_array: case napi_uint16_array: return 2;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: return 4;
    case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: return 8;
    default: return 1;
  }
}

// A typed array's memory: `ok` false when the value is not a typed array.
struct TypedView {
  void* data = nullptr;
  std::size_t length = 0;  // elements
  std::size_t bytes = 0;
  napi_typedarray_type type = napi_int8_array;
  bool ok = false;
};

// One N-API call: napi_get_typedarray_info fails (napi_invalid_arg) on anything that is not a
// typed array, so no separate type test is needed.
inline TypedView typed_view(const Napi::Value& v) {
  TypedView out;
  if (napi_get_typedarray_info(v.Env(), v, &out.type, &out.length, &out.data, nullptr, nullptr) != napi_ok) return TypedView{};
  if (out.data == nullptr && out.length != 0) return TypedView{};
  out.bytes = out.length * element_bytes(out.type);
  out.ok = true;
  return out;
}

// A typed array of exactly the type `want`: its data and length in elements.
inline bool typed(const Napi::Value& v, napi_typedarray_type want, void** data, std::size_t* length) {
  const TypedView view = typed_view(v);
  if (!view.ok || view.type != want) return false;
  *data = view.data;
  *length = view.length;
  return true;
}

// The farthest element index (inclusive) a strided view at `offset` reaches: offset + sum of
// (n[i] - 1) * s[i]; -1 when an extent is 0 (it reaches nothing). With every input in [0, 2^53]
// each term is below 2^106, so a sum of up to 64 of them stays below 2^112 and can never wrap
// around into "reaches nothing".
inline __int128 last_index(int64_t offset, int rank, const int64_t* n, const int64_t* s) {
  __int128 last = offset;
  for (int i = 0; i < rank; ++i) {
    if (n[i] == 0) return -1;
    last += static_cast<__int128>(n[i] - 1) * s[i];
  }
  return last;
}

// Bytes from the start of the array to one past the last byte the view reaches (0: nothing).
inline __int128 reach_bytes(int64_t offset, int rank, const int64_t* n, const int64_t* s, std::size_t element_bytes) {
  return (last_index(offset, rank, n, s) + 1) * static_cast<__int128>(element_bytes);
}

// Whether elements 0..last (of `element_bytes` each) lie inside `byte_length` bytes; a view that
// reaches nothing (last -1) always fits.
inline bool fits(__int128 last, std::size_t element_bytes, std::size_t byte_length) {
  return (last + 1) * static_cast<__int128>(element_bytes) <= static_cast<__int128>(byte_length);
}

// The ISA report every addon's info() carries (what @tenferro/os's defineAddon reads): `supported`
// (names[path] -> whether this build runs it here, slowest first), `notBuilt` (the names of the
// paths this build left out, slowest first) and `runsNotBuilt` (tenferro::isa::any_runs_not_built).
inline void set_isa_report(Napi::Object o, const char* const names[isa::kCount]) {
  Napi::Env env = o.Env();
  Napi::Object supported = Napi::Object::New(env);
  Napi::Array not_built = Napi::Array::New(env);
  for (int i = 0; i < isa::kCount; ++i) {
    const auto path = static_cast<isa::Path>(i);
    supported.Set(names[i], isa::supported(path));
    if (!isa::built(path)) not_built.Set(not_built.Length(), names[i]);
  }
  o.Set("supported", supported);
  o.Set("notBuilt", not_built);
  o.Set("runsNotBuilt", isa::any_runs_not_built());
}

}  // namespace napi_args
}  // namespace tenferro

#endif  // TENFERRO_NAPI_ARGS_H_
