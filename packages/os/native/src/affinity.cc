// @tenferro/os native binding: per-thread CPU affinity for Linux (registered in addon.cc).
//
// Contract with the TypeScript side (src/binding.ts):
//   gettid(): number                               -- syscall(SYS_gettid) of the calling thread
//   yieldThread(): undefined                       -- sched_yield()
//   currentCpu(): number                           -- sched_getcpu() of the calling thread, -1 when unknown
//   getThreadAffinity():  { errno: number, cpus: number[] }   -- sched_getaffinity(0)
//   getProcessAffinity(): { errno: number, cpus: number[] }   -- sched_getaffinity(getpid())
//   getProcessAffinity(): { errno: number, cpus: number[] }   -- the process mask recorded at load
//   setThreadAffinity(cpus: number[]): number      -- sched_setaffinity(0); returns 0, an errno,
//                                                     or kOutsideAllowedSet (-1)
//
// No function throws: failures are reported as errno values. Input to setThreadAffinity is
// validated in TypeScript first; the checks here are the second line of defence: a misuse
// answers EINVAL instead of touching memory it should not, and a CPU outside the process mask
// recorded at load answers kOutsideAllowedSet without any system call (affinity is never
// widened, R9 -- in the binding itself, so no caller of the raw binding can widen either).
//
// The process mask is recorded ONCE per process, when the addon is first loaded (in whichever
// environment loads it first: the .so and its statics are shared by the main thread and every
// worker), from the thread-group leader (sched_getaffinity(getpid()), the main thread) and not
// from the calling thread: a worker that something had already narrowed before the first load
// must not shrink the process mask to its own, and narrowing the main thread later (or any
// thread) never changes the recorded mask. The recorded mask is not refreshed: a later
// `taskset -a -p` that widens the process is not followed (tenferro stays inside the original
// set), and one that narrows it is followed by the kernel only where it is a cpuset limit.
//
// Masks are sized dynamically with CPU_ALLOC / CPU_ALLOC_SIZE, so machines with more than
// CPU_SETSIZE (1024) CPUs work: on EINVAL the size is doubled up to kMaxCpus.

#include <napi.h>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "os_addon.h"

namespace os {
namespace {

constexpr size_t kInitialCpus = 1024;

struct CpuMask {
  cpu_set_t* set = nullptr;
  size_t bytes = 0;
  size_t ncpus = 0;

  CpuMask() = default;
  CpuMask(const CpuMask&) = delete;
  CpuMask& operator=(const CpuMask&) = delete;
  ~CpuMask() {
    if (set != nullptr) CPU_FREE(set);
  }

  bool alloc(size_t n) {
    if (set != nullptr) CPU_FREE(set);
    set = CPU_ALLOC(n);
    if (set == nullptr) return false;
    ncpus = n;
    bytes = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(bytes, set);
    return true;
  }
};

size_t initial_size() {
  long conf = sysconf(_SC_NPROCESSORS_CONF);
  size_t n = kInitialCpus;
  while (conf > 0 && n < static_cast<size_t>(conf) && n < kMaxCpus) n *= 2;
  return n;
}

// Reads the affinity mask of `pid` (0 = calling thread). Returns 0 or an errno.
int read_mask(pid_t pid, CpuMask* mask) {
  for (size_t n = initial_size(); n <= kMaxCpus; n *= 2) {
    if (!mask->alloc(n)) return ENOMEM;
    if (sched_getaffinity(pid, mask->bytes, mask->set) == 0) return 0;
    int err = errno;
    if (err != EINVAL) return err;
  }
  return EINVAL;
}

Napi::Value affinity_result(Napi::Env env, pid_t pid) {
  CpuMask mask;
  int err = read_mask(pid, &mask);
  Napi::Object result = Napi::Object::New(env);
  Napi::Array cpus = Napi::Array::New(env);
  if (err == 0) {
    uint32_t count = 0;
    // CPU_ALLOC_SIZE rounds up to whole longs, so test every bit the kernel could have set.
    const size_t bits = mask.bytes * 8;
    for (size_t cpu = 0; cpu < bits; ++cpu) {
      if (CPU_ISSET_S(cpu, mask.bytes, mask.set)) {
        cpus.Set(count++, Napi::Number::New(env, static_cast<double>(cpu)));
      }
    }
  }
  result.Set("errno", Napi::Number::New(env, err));
  result.Set("cpus", cpus);
  return result;
}

}  // namespace

const ProcessMask& process_mask() {
  // A function-local static: initialised exactly once per process (thread-safe, C++11), on the
  // first call, which addon.cc makes while the addon loads.
  static const ProcessMask recorded = [] {
    ProcessMask m;
    CpuMask mask;
    m.err = read_mask(getpid(), &mask);
    if (m.err == 0) {
      const size_t bits = mask.bytes * 8;
      for (size_t cpu = 0; cpu < bits && cpu < kMaxCpus; ++cpu) {
        if (CPU_ISSET_S(cpu, mask.bytes, mask.set)) m.cpus.push_back(static_cast<uint32_t>(cpu));
      }
      if (m.cpus.empty()) m.err = EINVAL;
    }
    return m;
  }();
  return recorded;
}

bool ProcessMask::contains(size_t cpu) const {
  size_t lo = 0, hi = cpus.size();  // binary search in the sorted ids
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (cpus[mid] < cpu) lo = mid + 1;
    else hi = mid;
  }
  return lo < cpus.size() && cpus[lo] == cpu;
}

namespace js {

Napi::Value get_thread_affinity(const Napi::CallbackInfo& info) { return affinity_result(info.Env(), 0); }

Napi::Value get_process_affinity(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const ProcessMask& recorded = process_mask();
  Napi::Object result = Napi::Object::New(env);
  Napi::Array cpus = Napi::Array::New(env);
  for (uint32_t i = 0; i < recorded.cpus.size(); ++i) cpus.Set(i, Napi::Number::New(env, static_cast<double>(recorded.cpus[i])));
  result.Set("errno", Napi::Number::New(env, recorded.err));
  result.Set("cpus", cpus);
  return result;
}

Napi::Value set_thread_affinity(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto answer = [&](int err) { return Napi::Number::New(env, err); };
  if (info.Length() < 1 || !info[0].IsArray()) return answer(EINVAL);
  Napi::Array list = info[0].As<Napi::Array>();
  const uint32_t length = list.Length();
  if (length == 0) return answer(EINVAL);

  // Read every id once (a getter cannot change it between passes), check it and find the
  // largest, to size the mask.
  std::vector<size_t> ids;
  ids.reserve(length);
  size_t max_cpu = 0;
  for (uint32_t i = 0; i < length; ++i) {
    Napi::Value v = list.Get(i);
    if (!v.IsNumber()) return answer(EINVAL);
    double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= 0) || d >= static_cast<double>(kMaxCpus) || d != static_cast<double>(static_cast<size_t>(d))) {
      return answer(EINVAL);
    }
    size_t cpu = static_cast<size_t>(d);
    ids.push_back(cpu);
    if (cpu > max_cpu) max_cpu = cpu;
  }

  // Never widen: every id must be in the process mask recorded at load (checked before the
  // mask is even allocated). A process mask that could not be read refuses everything.
  const ProcessMask& allowed = process_mask();
  if (allowed.err != 0) return answer(allowed.err);
  for (size_t cpu : ids) {
    if (!allowed.contains(cpu)) return answer(kOutsideAllowedSet);
  }

  CpuMask mask;
  if (!mask.alloc(max_cpu + 1)) return answer(ENOMEM);
  for (size_t cpu : ids) CPU_SET_S(cpu, mask.bytes, mask.set);
  if (sched_setaffinity(0, mask.bytes, mask.set) != 0) return answer(errno);
  return answer(0);
}

Napi::Value gettid(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(syscall(SYS_gettid))); }

// sched_yield(): lets another runnable thread on this CPU run; a spin-wait calls it so that two
// spinning threads sharing one CPU hand over within a yield instead of a whole time slice.
Napi::Value yield_thread(const Napi::CallbackInfo& info) {
  sched_yield();
  return info.Env().Undefined();
}

// sched_getcpu(): the CPU the calling thread runs on right now (through the vDSO or rseq: no
// system call), -1 when the kernel cannot tell. A spin-wait asks it to yield only to a thread
// that shares its CPU.
Napi::Value current_cpu(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(sched_getcpu())); }

}  // namespace js
}  // namespace os
