// @tenferro/os: the N-API side of the machine-wide arbiter (machine_arbiter.h, #41; typed view:
// src/binding.ts). Clients are opened with arbiterOpen(onGrants, isolated, true) and driven by the
// process arbiter's functions (arbiter_binding.cc), whose handles carry the table they use.
//
//   machineJoin(name, group): { path } | { error, message, abi, otherAbi }
//   machineJoined(): name | null
//   machineCensus(): { pids: number[], entries: { pid, holds, exclusive, since, cpus }[], lockRepairs } | null
#include <napi.h>

#include "machine_arbiter.h"
#include "os_addon.h"

namespace os {
namespace js {

Napi::Value machine_join(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsBoolean()) {
    out.Set("error", Napi::String::New(env, "invalid-name"));
    out.Set("message", Napi::String::New(env, "machineJoin(name: string, group: boolean)"));
    return out;
  }
  const machine::JoinResult r = machine::join(info[0].As<Napi::String>().Utf8Value(), info[1].As<Napi::Boolean>().Value());
  if (r.error != nullptr) {
    out.Set("error", Napi::String::New(env, r.error));
    out.Set("message", Napi::String::New(env, r.message));
    out.Set("abi", Napi::Number::New(env, r.abi));
    out.Set("otherAbi", Napi::Number::New(env, r.other_abi));
  } else {
    out.Set("path", Napi::String::New(env, r.path));
  }
  return out;
}

Napi::Value machine_joined(const Napi::CallbackInfo& info) {
  const std::string name = machine::joined_name();
  return name.empty() ? info.Env().Null() : Napi::String::New(info.Env(), name);
}

Napi::Value machine_census(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<machine::CensusEntry> entries;
  std::vector<int32_t> pids;
  if (!machine::census(&entries, &pids)) return env.Null();
  Napi::Object out = Napi::Object::New(env);
  Napi::Array p = Napi::Array::New(env, pids.size());
  for (size_t i = 0; i < pids.size(); i++) p.Set(static_cast<uint32_t>(i), Napi::Number::New(env, pids[i]));
  Napi::Array e = Napi::Array::New(env, entries.size());
  for (size_t i = 0; i < entries.size(); i++) {
    const machine::CensusEntry& c = entries[i];
    Napi::Object o = Napi::Object::New(env);
    o.Set("pid", Napi::Number::New(env, c.pid));
    o.Set("holds", Napi::Boolean::New(env, c.holds));
    o.Set("exclusive", Napi::Boolean::New(env, c.exclusive));
    o.Set("since", Napi::Number::New(env, static_cast<double>(c.since_ms)));
    Napi::Array cpus = Napi::Array::New(env, c.cpus.size());
    for (size_t k = 0; k < c.cpus.size(); k++) cpus.Set(static_cast<uint32_t>(k), Napi::Number::New(env, c.cpus[k]));
    o.Set("cpus", cpus);
    e.Set(static_cast<uint32_t>(i), o);
  }
  out.Set("pids", p);
  out.Set("entries", e);
  out.Set("lockRepairs", Napi::Number::New(env, static_cast<double>(machine::lock_repairs())));
  return out;
}

}  // namespace js
}  // namespace os
