// tenferro_os.node: registers the exports (typed view: src/binding.ts). Registration only; the
// functions are in affinity.cc, memory.cc, death_token.cc and arbiter_binding.cc.
//
// The module is context-aware (NODE_API_MODULE registers a N-API module, which Node loads once
// per environment), so it can be used from the main thread and from worker_threads.
#include <napi.h>

#include "abi.generated.h"
#include "os_addon.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  // Record the process affinity mask now, at the first load in this process (affinity.cc).
  os::process_mask();
  exports.Set("gettid", Napi::Function::New(env, os::js::gettid, "gettid"));
  exports.Set("yieldThread", Napi::Function::New(env, os::js::yield_thread, "yieldThread"));
  exports.Set("currentCpu", Napi::Function::New(env, os::js::current_cpu, "currentCpu"));
  exports.Set("getThreadAffinity", Napi::Function::New(env, os::js::get_thread_affinity, "getThreadAffinity"));
  exports.Set("getProcessAffinity", Napi::Function::New(env, os::js::get_process_affinity, "getProcessAffinity"));
  exports.Set("setThreadAffinity", Napi::Function::New(env, os::js::set_thread_affinity, "setThreadAffinity"));
  exports.Set("typedArrayRange", Napi::Function::New(env, os::js::typed_array_range, "typedArrayRange"));
  exports.Set("adjustExternalMemory", Napi::Function::New(env, os::js::adjust_external_memory, "adjustExternalMemory"));
  exports.Set("adviseHugePages", Napi::Function::New(env, os::js::advise_huge_pages, "adviseHugePages"));
  exports.Set("onDeathTokens", Napi::Function::New(env, os::js::on_death_tokens, "onDeathTokens"));
  exports.Set("deathToken", Napi::Function::New(env, os::js::death_token, "deathToken"));
  exports.Set("arbiterInfo", Napi::Function::New(env, os::js::arbiter_info, "arbiterInfo"));
  exports.Set("arbiterOpen", Napi::Function::New(env, os::js::arbiter_open, "arbiterOpen"));
  exports.Set("arbiterAcquire", Napi::Function::New(env, os::js::arbiter_acquire, "arbiterAcquire"));
  exports.Set("arbiterRelease", Napi::Function::New(env, os::js::arbiter_release, "arbiterRelease"));
  exports.Set("arbiterCancel", Napi::Function::New(env, os::js::arbiter_cancel, "arbiterCancel"));
  exports.Set("arbiterTakeGrants", Napi::Function::New(env, os::js::arbiter_take_grants, "arbiterTakeGrants"));
  exports.Set("arbiterRef", Napi::Function::New(env, os::js::arbiter_ref, "arbiterRef"));
  exports.Set("arbiterStats", Napi::Function::New(env, os::js::arbiter_stats, "arbiterStats"));
  exports.Set("arbiterReserveOwners", Napi::Function::New(env, os::js::arbiter_reserve_owners, "arbiterReserveOwners"));
  exports.Set("machineJoin", Napi::Function::New(env, os::js::machine_join, "machineJoin"));
  exports.Set("machineJoined", Napi::Function::New(env, os::js::machine_joined, "machineJoined"));
  exports.Set("machineCensus", Napi::Function::New(env, os::js::machine_census, "machineCensus"));
  exports.Set("outsideAllowedSet", Napi::Number::New(env, os::kOutsideAllowedSet));
  exports.Set("maxCpus", Napi::Number::New(env, static_cast<double>(os::kMaxCpus)));
  exports.Set("abiHash", Napi::String::New(env, os::arbiter::kAbiHash));  // native/src/abi.mjs (#40)
  return exports;
}

}  // namespace

NODE_API_MODULE(tenferro_os, init)
