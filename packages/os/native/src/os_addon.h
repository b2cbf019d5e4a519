// @tenferro/os: the N-API callbacks that addon.cc registers, one per export (affinity.cc). None
// throws: failures are errno values.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include <napi.h>

namespace os {

constexpr size_t kMaxCpus = size_t{1} << 20;  // 2^20 CPUs, same cap as the TypeScript side
/** setThreadAffinity's answer for a CPU outside the recorded process mask (errno values are > 0). */
constexpr int kOutsideAllowedSet = -1;

/** The process affinity mask as recorded once, when the addon first loaded (affinity.cc). */
struct ProcessMask {
  int err = 0;                  // 0, or the errno of sched_getaffinity(getpid())
  std::vector<uint32_t> cpus;   // sorted ascending
  bool contains(size_t cpu) const;
};
/** Records the mask on the first call (addon.cc calls it at load); the same object afterwards. */
const ProcessMask& process_mask();

namespace js {

/** `gettid()`: syscall(SYS_gettid) of the calling thread. */
Napi::Value gettid(const Napi::CallbackInfo& info);
/** `yieldThread()`: sched_yield(). */
Napi::Value yield_thread(const Napi::CallbackInfo& info);
/** `currentCpu()`: sched_getcpu() of the calling thread, -1 when unknown. */
Napi::Value current_cpu(const Napi::CallbackInfo& info);
/** `getThreadAffinity()`: { errno, cpus } of sched_getaffinity(0). */
Napi::Value get_thread_affinity(const Napi::CallbackInfo& info);
/** `getProcessAffinity()`: { errno, cpus } of the process mask recorded at load. */
Napi::Value get_process_affinity(const Napi::CallbackInfo& info);
/** `setThreadAffinity(cpus)`: 0, an errno, or kOutsideAllowedSet. */
Napi::Value set_thread_affinity(const Napi::CallbackInfo& info);
/** `typedArrayRange(view)`: { address: bigint, byteLength } of a Uint8Array's memory, or null (memory.cc). */
Napi::Value typed_array_range(const Napi::CallbackInfo& info);

Napi::Value adjust_external_memory(const Napi::CallbackInfo& info);
/** `adviseHugePages(view)`: madvise(MADV_HUGEPAGE) on the view's 2 MiB-aligned part; bytes advised or -errno (memory.cc). */
Napi::Value advise_huge_pages(const Napi::CallbackInfo& info);
/** `onDeathTokens(handler)`: a new channel whose collected tokens' ids `handler` is told, or -1 (death_token.cc). */
Napi::Value on_death_tokens(const Napi::CallbackInfo& info);
/** `deathToken(channel, id)`: an ArrayBuffer whose collection, a scavenge's included, calls the channel's handler with `id` (death_token.cc). */
Napi::Value death_token(const Napi::CallbackInfo& info);

// The process-wide arbiter (arbiter_binding.cc; state and rule in arbiter.cc).
Napi::Value arbiter_info(const Napi::CallbackInfo& info);
Napi::Value arbiter_open(const Napi::CallbackInfo& info);
Napi::Value arbiter_acquire(const Napi::CallbackInfo& info);
Napi::Value arbiter_release(const Napi::CallbackInfo& info);
Napi::Value arbiter_cancel(const Napi::CallbackInfo& info);
Napi::Value arbiter_take_grants(const Napi::CallbackInfo& info);
Napi::Value arbiter_ref(const Napi::CallbackInfo& info);
Napi::Value arbiter_stats(const Napi::CallbackInfo& info);
Napi::Value arbiter_reserve_owners(const Napi::CallbackInfo& info);
// The machine-wide arbiter (#41; machine_arbiter_binding.cc, state in machine_arbiter.cc).
Napi::Value machine_join(const Napi::CallbackInfo& info);
Napi::Value machine_joined(const Napi::CallbackInfo& info);
Napi::Value machine_census(const Napi::CallbackInfo& info);

}  // namespace js
}  // namespace os
