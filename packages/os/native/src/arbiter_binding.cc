// @tenferro/os: the N-API side of the process-wide arbiter (arbiter.h; typed view: src/arbiter.ts).
//
//   arbiterInfo(): { abi, shared, refused, otherAbi }
//   arbiterOpen(onGrants, isolated, machine?): client (an external) | null (refused, or out of memory);
//     `machine` true: a client of the machine-wide arbiter this process joined (#41,
//     machine_arbiter.cc; `isolated`: of a private segment of its layout) — the functions below
//     drive it through the same table
//   arbiterAcquire(client, request, owner, pairs: Uint32Array | null): flags | -1
//   arbiterRelease(client, request) / arbiterCancel(client, request): flags
//   arbiterTakeGrants(client): number[] (request * 2 + reentrant)
//   arbiterRef(client, ref): undefined
//   arbiterStats(client | null): { active, waiting, clients }
//   arbiterReserveOwners(count, floor): first id | 0
//
// A client lives as long as its isolate: one thread-safe function per client wakes that isolate
// (`onGrants` is called on its own thread with the ids it was granted) when another isolate's
// release or abort admitted one of its waiters — no polling. The thread-safe function is unref'd
// (an idle isolate can exit); src/arbiter.ts refs it while the client has waiters. An environment
// cleanup hook, registered after the thread-safe function (hooks run in reverse order, so it runs
// before Node closes that function), closes the client when its isolate ends — worker
// terminate(), an uncaught error, process exit — releasing its permits and dropping its waiters,
// which wakes the waiters they were blocking.
#include <napi.h>

#include <cmath>
#include <vector>

#include "arbiter.h"
#include "machine_arbiter.h"
#include "os_addon.h"
#include "tenferro/napi_args.h"

namespace os {
namespace js {

namespace {

using arbiter::ArbiterApi;

struct Handle {
  const ArbiterApi* api = nullptr;
  arbiter::Client* client = nullptr;
  napi_env env = nullptr;
  napi_threadsafe_function tsfn = nullptr;
};

constexpr double kMaxId = 4503599627370495.0;  // 2^52 - 1: request * 2 + 1 stays an exact double

constexpr double kMaxOwner = 9007199254740991.0;  // 2^53 - 1

/** A positive integer no greater than `max`, else 0. */
uint64_t read_id(const Napi::Value& v, double max = kMaxId) {
  if (!v.IsNumber()) return 0;
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!tenferro::napi_args::is_int(d, 1, max)) return 0;
  return static_cast<uint64_t>(d);
}

Handle* read_handle(const Napi::Value& v) {
  if (!v.IsExternal()) return nullptr;
  Handle* h = v.As<Napi::External<Handle>>().Data();
  return h != nullptr && h->client != nullptr ? h : nullptr;
}

void wake(void* ctx) {
  // Called with the arbiter's lock held, from any thread: enqueue only, never block.
  napi_call_threadsafe_function(static_cast<Handle*>(ctx)->tsfn, nullptr, napi_tsfn_nonblocking);
}

napi_value grants_array(napi_env env, Handle* h) {
  std::vector<double> ids;
  uint64_t buf[64];
  for (;;) {
    const uint32_t n = h->api->take_grants(h->client, buf, 64);
    for (uint32_t i = 0; i < n; i++) ids.push_back(static_cast<double>(buf[i]));
    if (n < 64) break;
  }
  napi_value array;
  if (napi_create_array_with_length(env, ids.size(), &array) != napi_ok) return nullptr;
  for (size_t i = 0; i < ids.size(); i++) {
    napi_value num;
    if (napi_create_double(env, ids[i], &num) != napi_ok) return nullptr;
    napi_set_element(env, array, static_cast<uint32_t>(i), num);
  }
  return array;
}

void call_js(napi_env env, napi_value js_cb, void* context, void* /*data*/) {
  Handle* h = static_cast<Handle*>(context);
  if (env == nullptr || js_cb == nullptr || h->client == nullptr) return;  // being torn down
  napi_value ids = grants_array(env, h);
  uint32_t length = 0;
  if (ids == nullptr || napi_get_array_length(env, ids, &length) != napi_ok || length == 0) return;
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  napi_call_function(env, undefined, js_cb, 1, &ids, nullptr);
}

void close_client(void* arg) {
  Handle* h = static_cast<Handle*>(arg);
  if (h->client == nullptr) return;
  arbiter::Client* c = h->client;
  h->client = nullptr;
  h->api->client_close(c);  // after this no thread calls wake(h)
}

void finalize_tsfn(napi_env env, void* data, void* /*hint*/) {
  Handle* h = static_cast<Handle*>(data);
  close_client(h);  // normally done already by the cleanup hook
  if (env != nullptr) napi_remove_env_cleanup_hook(env, close_client, h);
  delete h;
}

}  // namespace

Napi::Value arbiter_info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const arbiter::Rendezvous& r = arbiter::rendezvous();
  Napi::Object out = Napi::Object::New(env);
  out.Set("abi", Napi::Number::New(env, r.own_abi));
  out.Set("shared", Napi::Boolean::New(env, r.shared_with_other_copy));
  out.Set("refused", Napi::Boolean::New(env, r.api == nullptr));
  out.Set("otherAbi", Napi::Number::New(env, r.other_abi));
  return out;
}

Napi::Value arbiter_open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const bool machine = info.Length() >= 3 && info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
  const ArbiterApi* api = machine ? machine::api() : arbiter::rendezvous().api;
  if (api == nullptr || info.Length() < 2 || !info[0].IsFunction() || !info[1].IsBoolean()) return env.Null();
  const bool isolated = info[1].As<Napi::Boolean>().Value();
  Handle* h = new Handle();
  h->api = api;
  h->env = env;
  napi_value name;
  napi_create_string_utf8(env, "tenferro arbiter grants", NAPI_AUTO_LENGTH, &name);
  if (napi_create_threadsafe_function(env, info[0], nullptr, name, 0, 1, h, finalize_tsfn, h, call_js, &h->tsfn) != napi_ok) {
    delete h;
    return env.Null();
  }
  napi_unref_threadsafe_function(env, h->tsfn);
  h->client = api->client_open(isolated ? 1 : 0, wake, h);
  if (h->client == nullptr) {
    napi_release_threadsafe_function(h->tsfn, napi_tsfn_abort);  // its finalizer deletes h
    return env.Null();
  }
  // Registered after the thread-safe function, so it runs before Node closes it at teardown.
  napi_add_env_cleanup_hook(env, close_client, h);
  return Napi::External<Handle>::New(env, h);
}

Napi::Value arbiter_acquire(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Handle* h = info.Length() >= 4 ? read_handle(info[0]) : nullptr;
  const uint64_t request = info.Length() >= 4 ? read_id(info[1]) : 0;
  const uint64_t owner = info.Length() >= 4 ? read_id(info[2], kMaxOwner) : 0;
  if (h == nullptr || request == 0 || owner == 0) return Napi::Number::New(env, arbiter::kInvalid);
  if (info[3].IsNull()) return Napi::Number::New(env, h->api->acquire(h->client, request, owner, 1, nullptr, 0));
  size_t length = 0;
  void* data = nullptr;
  if (!tenferro::napi_args::typed(info[3], napi_uint32_array, &data, &length) || length % 2 != 0 || length / 2 > arbiter::kMaxPairs || length == 0) {
    return Napi::Number::New(env, arbiter::kInvalid);
  }
  const uint32_t npairs = static_cast<uint32_t>(length / 2);
  return Napi::Number::New(env, h->api->acquire(h->client, request, owner, 0, static_cast<const uint32_t*>(data), npairs));
}

Napi::Value arbiter_release(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Handle* h = info.Length() >= 2 ? read_handle(info[0]) : nullptr;
  const uint64_t request = info.Length() >= 2 ? read_id(info[1]) : 0;
  if (h == nullptr || request == 0) return Napi::Number::New(env, 0);
  return Napi::Number::New(env, h->api->release(h->client, request));
}

Napi::Value arbiter_cancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Handle* h = info.Length() >= 2 ? read_handle(info[0]) : nullptr;
  const uint64_t request = info.Length() >= 2 ? read_id(info[1]) : 0;
  if (h == nullptr || request == 0) return Napi::Number::New(env, 0);
  return Napi::Number::New(env, h->api->cancel(h->client, request));
}

Napi::Value arbiter_take_grants(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Handle* h = info.Length() >= 1 ? read_handle(info[0]) : nullptr;
  if (h == nullptr) return Napi::Array::New(env, 0);
  napi_value ids = grants_array(env, h);
  return ids == nullptr ? Napi::Array::New(env, 0) : Napi::Value(env, ids);
}

Napi::Value arbiter_ref(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Handle* h = info.Length() >= 2 ? read_handle(info[0]) : nullptr;
  if (h != nullptr && info[1].IsBoolean()) {
    if (info[1].As<Napi::Boolean>().Value()) napi_ref_threadsafe_function(env, h->tsfn);
    else napi_unref_threadsafe_function(env, h->tsfn);
  }
  return env.Undefined();
}

Napi::Value arbiter_stats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const arbiter::Rendezvous& r = arbiter::rendezvous();
  if (r.api == nullptr) return env.Null();
  Handle* h = info.Length() >= 1 ? read_handle(info[0]) : nullptr;
  uint64_t out[3] = {0, 0, 0};
  if (h == nullptr) r.api->stats(nullptr, out);
  else h->api->stats(h->client, out);
  Napi::Object o = Napi::Object::New(env);
  o.Set("active", Napi::Number::New(env, static_cast<double>(out[0])));
  o.Set("waiting", Napi::Number::New(env, static_cast<double>(out[1])));
  o.Set("clients", Napi::Number::New(env, static_cast<double>(out[2])));
  return o;
}

Napi::Value arbiter_reserve_owners(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const arbiter::Rendezvous& r = arbiter::rendezvous();
  if (r.api == nullptr || info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) return Napi::Number::New(env, 0);
  const double count = info[0].As<Napi::Number>().DoubleValue();
  const double floor = info[1].As<Napi::Number>().DoubleValue();
  if (!tenferro::napi_args::is_int(count, 1, 1048576) || !tenferro::napi_args::is_int(floor, 0, kMaxId)) {
    return Napi::Number::New(env, 0);
  }
  return Napi::Number::New(env, static_cast<double>(r.api->reserve_owners(static_cast<uint64_t>(count), static_cast<uint64_t>(floor))));
}

}  // namespace js
}  // namespace os
