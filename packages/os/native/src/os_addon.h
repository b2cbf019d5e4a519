// @tenferro/os: the N-API callbacks that addon.cc registers, one per export (affinity.cc). None
// throws: failures are errno values.
#pragma once

#include <stddef.h>

#include <napi.h>

namespace os {

constexpr size_t kMaxCpus = size_t{1} << 20;  // 2^20 CPUs, same cap as the TypeScript side

namespace js {

/** `gettid()`: syscall(SYS_gettid) of the calling thread. */
Napi::Value gettid(const Napi::CallbackInfo& info);
/** `yieldThread()`: sched_yield(). */
Napi::Value yield_thread(const Napi::CallbackInfo& info);
/** `getThreadAffinity()`: { errno, cpus } of sched_getaffinity(0). */
Napi::Value get_thread_affinity(const Napi::CallbackInfo& info);
/** `getProcessAffinity()`: { errno, cpus } of sched_getaffinity(getpid()). */
Napi::Value get_process_affinity(const Napi::CallbackInfo& info);
/** `setThreadAffinity(cpus)`: 0 or an errno. */
Napi::Value set_thread_affinity(const Napi::CallbackInfo& info);

}  // namespace js
}  // namespace os
