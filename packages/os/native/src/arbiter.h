// @tenferro/os: the process-wide resource arbiter (arbiter.cc) and its N-API glue
// (arbiter_binding.cc).
//
// One arbiter state per process, shared by every JavaScript isolate (main thread and every
// worker_thread) that loads this addon — and by every *copy* of the addon whose arbiter ABI
// matches (two installed versions of @tenferro/os): the first copy loaded publishes the table
// below under the process-wide symbol `tenferro_os_arbiter_rendezvous` (see arbiter.cc), later
// copies find it with dlsym(RTLD_DEFAULT, …) and use it instead of their own state. A copy whose
// ABI differs refuses to start a process arbiter (arbiterOpen answers `abi-mismatch`).
//
// The state is a plain C ABI (C types and function pointers only), so copies built by different
// compilers or against different headers still agree on it as long as kArbiterAbi matches.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "abi.generated.h"

namespace os {
namespace arbiter {

/** Bump on any change to ArbiterApi or to the meaning of its functions. */
constexpr uint32_t kArbiterAbi = 1;

/** A client: one per (isolate, copy of @tenferro/core) on the shared state, or a private state (tests). */
struct Client;

/** How the state wakes a client whose waiters were admitted by another client (any thread). Called with the state's lock held; must not block. */
using WakeFn = void (*)(void* ctx);

// acquire() answers (bit flags kAdmitted, kReentrant, kGrantsPending, kRemoved; kInvalid): the ABI
// table native/src/abi.mjs, shared with src/binding.ts's ARBITER_FLAGS (#40), in abi.generated.h.

/** The C ABI every copy of the addon shares (field order and types are frozen for kArbiterAbi). */
struct ArbiterApi {
  uint32_t abi;
  uint32_t size;  // sizeof(ArbiterApi) of the publishing copy
  /** A new client on the process-wide state (`isolated == 0`) or on a fresh private state of its own. */
  Client* (*client_open)(int isolated, WakeFn wake, void* ctx);
  /** Drop the client: its permits are released and its waiters removed (others woken). Idempotent per client, once. */
  void (*client_close)(Client* client);
  /**
   * Ask for a permit: `exclusive`, or the CPU set given as `pairs` (word index, 32-bit mask) pairs
   * with strictly increasing indices and non-zero masks, `npairs` pairs. `request` is the client's
   * own id for it (unique among the client's live requests). Answers kAdmitted[|kReentrant] or 0
   * (queued), each |kGrantsPending, or kInvalid.
   */
  int (*acquire)(Client* client, uint64_t request, uint64_t owner, int exclusive, const uint32_t* pairs, uint32_t npairs);
  /** Release a held permit (unknown ids are ignored). Answers 0 or kGrantsPending. */
  int (*release)(Client* client, uint64_t request);
  /** Remove a queued waiter. Answers kRemoved when it was queued (else it was admitted already), |kGrantsPending. */
  int (*cancel)(Client* client, uint64_t request);
  /** Move up to `cap` admitted waiters of this client into `out` (request << 1 | reentrant), in admission order; answers how many. */
  uint32_t (*take_grants)(Client* client, uint64_t* out, uint32_t cap);
  /** Process-wide (or, for an isolated client, its state's) permits, waiters and clients. */
  void (*stats)(Client* client, uint64_t out[3]);
  /** `count` fresh process-wide owner ids, all >= `floor`; answers the first (0 when 2^53 would be passed). */
  uint64_t (*reserve_owners)(uint64_t count, uint64_t floor);
};

/** What this copy of the addon uses: its own table, or the one another copy published. */
struct Rendezvous {
  const ArbiterApi* api;      // nullptr when refused
  bool shared_with_other_copy;
  uint32_t other_abi;         // the other copy's ABI when refused
  uint32_t own_abi;           // this copy's ABI (kArbiterAbi unless a test claimed another)
};

/** Decided once, when the addon is loaded (under the dynamic loader's lock). */
const Rendezvous& rendezvous();

/** The largest CPU id + 1 a request may name (os_addon.h kMaxCpus). */
constexpr uint32_t kMaxPairs = (uint32_t{1} << 20) / 32;

}  // namespace arbiter
}  // namespace os
