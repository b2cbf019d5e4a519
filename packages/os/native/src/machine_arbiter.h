// @tenferro/os: the machine-wide arbiter (#41) — the process arbiter's rule (arbiter.cc) on a
// state that lives in a named POSIX shared-memory segment, /dev/shm/tenferro-<name>, so that
// every isolate of every process that joined the name shares one queue (one level: no separate
// process-wide state underneath). machine_arbiter.cc has the state, the rule and crash recovery;
// machine_arbiter_binding.cc the N-API glue. The client functions have exactly the signatures of
// ArbiterApi (arbiter.h), so the process arbiter's binding functions drive a machine client too
// (arbiterOpen(onGrants, isolated, true)).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "arbiter.h"

namespace os {
namespace machine {

/** Bump on any change to the segment's layout or to the meaning of its fields. */
constexpr uint32_t kMachineAbi = 1;

/** The client table of the joined segment (client_open(isolated=1): a private anonymous segment of the same layout). */
const arbiter::ArbiterApi* api();

/** How join() ended. */
struct JoinResult {
  const char* error = nullptr;  // nullptr: joined; else "invalid-name", "joined-other", "process-arbiter-in-use", "open-failed", "abi-mismatch", "pid-namespace", "full"
  std::string message;
  std::string path;
  uint32_t abi = kMachineAbi;
  uint32_t other_abi = 0;
};

/** Join the segment named `name` (create it, mode 0600 or 0660 with `group`), once per process. */
JoinResult join(const std::string& name, bool group);

/** The name this process joined, or "" (none yet). */
std::string joined_name();

/** One permit held or waited for on the joined segment (census). */
struct CensusEntry {
  int32_t pid;
  bool holds;
  bool exclusive;
  uint64_t since_ms;  // CLOCK_REALTIME milliseconds when it was queued / admitted
  std::vector<uint32_t> cpus;
};

/** After reaping dead processes: every entry, the live joined processes (pid), and whether the call could read the state. */
bool census(std::vector<CensusEntry>* entries, std::vector<int32_t>* pids);

/** How many times this process repaired the segment: it locked it after a process died holding the lock (EOWNERDEAD). */
uint64_t lock_repairs();

}  // namespace machine
}  // namespace os
