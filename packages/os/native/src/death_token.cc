// @tenferro/os native binding: death tokens — an object whose collection by *any* collection,
// a scavenge included, is reported back to JavaScript (registered in addon.cc; #38).
//
//   onDeathTokens(handler: (id: number) => void): number   (its channel, or -1)
//   deathToken(channel: number, id: number): ArrayBuffer | undefined
//
// A FinalizationRegistry callback runs only after a full (mark-compact) collection: V8's scavenger
// treats weak references as strong. An ArrayBuffer over external memory is different: when a
// scavenge finds it dead, V8 frees its backing store, and Node runs the store's finalizer at the
// next event-loop turn (node::Buffer's CallbackInfo through SetImmediateThreadsafe). A token is
// such an ArrayBuffer, one byte long over a static byte; its finalizer calls the handler of its
// channel with the token's id. Whoever holds the token therefore learns, at the first event-loop
// turn after the collection that found every holder dead, that they are dead. Each handler has a
// channel of its own (per thread), so that two users of tokens never hear of each other's.
//
// Nothing throws: a malformed channel or id, or anything but a function, answers undefined / -1,
// and a handler that throws is reported as an uncaught exception by Node, like any finalizer's.
#include <napi.h>

#include <cstdint>
#include <vector>

#include "os_addon.h"
#include "tenferro/napi_args.h"

namespace os {
namespace js {
namespace {

/** What a token points at: never read or written through a token (no one is handed a view). */
unsigned char token_byte = 0;

/** This thread's (environment's) handlers, by channel, kept as instance data. */
struct DeathHandlers {
  std::vector<napi_ref> handlers;
};

/** Channels per thread at most (each one a handler kept for the thread's life). */
constexpr size_t kMaxChannels = 1024;

static_assert(sizeof(void*) >= 8, "a token's hint packs a 32-bit channel and a 32-bit id");

DeathHandlers* handlers_of(napi_env env) {
  void* data = nullptr;
  if (napi_get_instance_data(env, &data) != napi_ok) return nullptr;
  return static_cast<DeathHandlers*>(data);
}

void free_handlers(napi_env env, void* data, void*) {
  auto* h = static_cast<DeathHandlers*>(data);
  for (napi_ref ref : h->handlers) napi_delete_reference(env, ref);
  delete h;
}

/** The token's finalizer: runs on the token's thread at an event-loop turn after its collection. */
void token_died(napi_env env, void*, void* hint) {
  DeathHandlers* h = handlers_of(env);
  const uint64_t packed = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(hint));
  const size_t channel = static_cast<size_t>(packed >> 32);
  if (h == nullptr || channel >= h->handlers.size()) return;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn = nullptr;
  napi_value global = nullptr;
  napi_value id = nullptr;
  // During an environment's teardown the handler may be gone or JS unreachable: then nothing is told.
  if (napi_get_reference_value(env, h->handlers[channel], &fn) == napi_ok && fn != nullptr && napi_get_global(env, &global) == napi_ok &&
      napi_create_uint32(env, static_cast<uint32_t>(packed & 0xffffffffu), &id) == napi_ok) {
    napi_call_function(env, global, fn, 1, &id, nullptr);
  }
  napi_close_handle_scope(env, scope);
}

}  // namespace

Napi::Value on_death_tokens(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto refused = Napi::Number::New(env, -1);
  if (info.Length() < 1 || !info[0].IsFunction()) return refused;
  DeathHandlers* h = handlers_of(env);
  if (h == nullptr) {
    h = new DeathHandlers();
    if (napi_set_instance_data(env, h, free_handlers, nullptr) != napi_ok) {
      delete h;
      return refused;
    }
  }
  if (h->handlers.size() >= kMaxChannels) return refused;
  napi_ref ref = nullptr;
  if (napi_create_reference(env, info[0], 1, &ref) != napi_ok) return refused;
  h->handlers.push_back(ref);
  return Napi::Number::New(env, static_cast<double>(h->handlers.size() - 1));
}

Napi::Value death_token(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) return env.Undefined();
  const double c = info[0].As<Napi::Number>().DoubleValue();
  const double d = info[1].As<Napi::Number>().DoubleValue();
  DeathHandlers* h = handlers_of(env);
  if (h == nullptr || !tenferro::napi_args::is_int(c, 0.0, static_cast<double>(h->handlers.size()) - 1.0)) return env.Undefined();
  if (!tenferro::napi_args::is_int(d, 0.0, 4294967295.0)) return env.Undefined();
  const uint64_t packed = (static_cast<uint64_t>(c) << 32) | static_cast<uint64_t>(d);
  napi_value token = nullptr;
  if (napi_create_external_arraybuffer(env, &token_byte, 1, token_died, reinterpret_cast<void*>(static_cast<uintptr_t>(packed)), &token) != napi_ok) {
    return env.Undefined();
  }
  return Napi::Value(env, token);
}

}  // namespace js
}  // namespace os
