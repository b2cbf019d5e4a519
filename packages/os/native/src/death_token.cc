// @tenferro/os native binding: death tokens — an object whose collection by *any* collection,
// a scavenge included, is reported back to JavaScript (registered in addon.cc; #38).
//
//   onDeathTokens(handler: (id: number) => void): boolean
//   deathToken(id: number): ArrayBuffer | undefined
//
// A FinalizationRegistry callback runs only after a full (mark-compact) collection: V8's scavenger
// treats weak references as strong. An ArrayBuffer over external memory is different: when a
// scavenge finds it dead, V8 frees its backing store, and Node runs the store's finalizer at the
// next event-loop turn (node::Buffer's CallbackInfo through SetImmediateThreadsafe). A token is
// such an ArrayBuffer, one byte long over a static byte; its finalizer calls this thread's handler
// with the token's id. Whoever holds the token therefore learns, at the first event-loop turn
// after the collection that found every holder dead, that they are dead.
//
// Nothing throws: a malformed id or a missing handler answers undefined / false, and a handler
// that throws is reported as an uncaught exception by Node, like any finalizer's.
#include <napi.h>

#include <cstdint>

#include "os_addon.h"
#include "tenferro/napi_args.h"

namespace os {
namespace js {
namespace {

/** What a token points at: never read or written through a token (no one is handed a view). */
unsigned char token_byte = 0;

/** This thread's (environment's) handler, kept as instance data. */
struct DeathHandler {
  napi_ref handler = nullptr;
};

DeathHandler* handler_of(napi_env env) {
  void* data = nullptr;
  if (napi_get_instance_data(env, &data) != napi_ok) return nullptr;
  return static_cast<DeathHandler*>(data);
}

void free_handler(napi_env env, void* data, void*) {
  auto* h = static_cast<DeathHandler*>(data);
  if (h->handler != nullptr) napi_delete_reference(env, h->handler);
  delete h;
}

/** The token's finalizer: runs on the token's thread at an event-loop turn after its collection. */
void token_died(napi_env env, void*, void* hint) {
  DeathHandler* h = handler_of(env);
  if (h == nullptr || h->handler == nullptr) return;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn = nullptr;
  napi_value global = nullptr;
  napi_value id = nullptr;
  // During an environment's teardown the handler may be gone or JS unreachable: then nothing is told.
  if (napi_get_reference_value(env, h->handler, &fn) == napi_ok && fn != nullptr && napi_get_global(env, &global) == napi_ok &&
      napi_create_uint32(env, static_cast<uint32_t>(reinterpret_cast<uintptr_t>(hint)), &id) == napi_ok) {
    napi_call_function(env, global, fn, 1, &id, nullptr);
  }
  napi_close_handle_scope(env, scope);
}

}  // namespace

Napi::Value on_death_tokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) return Napi::Boolean::New(env, false);
  DeathHandler* h = handler_of(env);
  if (h == nullptr) {
    h = new DeathHandler();
    if (napi_set_instance_data(env, h, free_handler, nullptr) != napi_ok) {
      delete h;
      return Napi::Boolean::New(env, false);
    }
  }
  napi_ref next = nullptr;
  if (napi_create_reference(env, info[0], 1, &next) != napi_ok) return Napi::Boolean::New(env, false);
  if (h->handler != nullptr) napi_delete_reference(env, h->handler);
  h->handler = next;
  return Napi::Boolean::New(env, true);
}

Napi::Value death_token(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) return env.Undefined();
  const double d = info[0].As<Napi::Number>().DoubleValue();
  if (!tenferro::napi_args::is_int(d, 0.0, 4294967295.0)) return env.Undefined();
  const uintptr_t id = static_cast<uintptr_t>(d);
  napi_value token = nullptr;
  if (napi_create_external_arraybuffer(env, &token_byte, 1, token_died, reinterpret_cast<void*>(id), &token) != napi_ok) return env.Undefined();
  return Napi::Value(env, token);
}

}  // namespace js
}  // namespace os
