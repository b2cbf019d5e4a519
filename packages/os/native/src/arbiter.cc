// @tenferro/os: the process-wide resource arbiter's state and admission rule (arbiter.h).
//
// The rule is exactly that of @tenferro/core's in-isolate ResourceArbiter (contract R27–R33):
// two permits of different owners whose requests conflict (overlapping CPU sets, or either
// provider-exclusive) are never held together; a waiter is admitted when no held permit of a
// different owner conflicts with it and no *older* waiter conflicts with it — the second
// condition waived when its owner already holds a permit (R29, R30); an uncontended request is
// admitted at once without a queue entry (R33). After every admission the scan restarts from the
// front of the queue (an admission can waive an older waiter's FIFO precedence).
//
// One mutex guards everything; no call blocks while holding it (waking another isolate is a
// non-blocking napi_call_threadsafe_function, arbiter_binding.cc). CPU sets are sparse bitsets:
// (32-bit word index, non-zero mask) pairs with increasing indices, so CPU 0 and CPU 1,000,000 cost
// two pairs. Every request is copied before it is validated (the caller's memory may be shared).
//
// Rendezvous of copies (two installed versions of @tenferro/os in one process): the first copy to
// load exports `tenferro_os_arbiter_rendezvous` with protected visibility (so that each copy's own
// references bind to itself) and re-opens itself with RTLD_NOLOAD | RTLD_GLOBAL, which puts its
// symbols in the process's global scope. Every later copy finds that symbol with
// dlsym(RTLD_DEFAULT, …) and uses the table it returns when the ABI matches, or refuses. The
// decision is made in a load-time constructor, i.e. while the dynamic loader's lock is held, so
// two copies loading at the same time on two threads are serialized and cannot both publish.
// The addon is compiled with -fvisibility=hidden, so the global scope gains only this symbol and
// N-API's module registration symbols (which Node looks up per handle).
#include "arbiter.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

namespace os {
namespace arbiter {

namespace {

struct Request {
  bool exclusive = false;
  std::vector<uint32_t> pairs;  // (word, mask) pairs, strictly increasing words, non-zero masks
};

bool overlaps(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) {
      if ((a[i + 1] & b[j + 1]) != 0) return true;
      i += 2;
      j += 2;
    } else if (a[i] < b[j]) {
      i += 2;
    } else {
      j += 2;
    }
  }
  return false;
}

bool conflicts(const Request& a, const Request& b) { return a.exclusive || b.exclusive || overlaps(a.pairs, b.pairs); }

struct State;

}  // namespace

struct Client {
  Client(State* s, WakeFn w, void* c, bool owns) : state(s), wake(w), ctx(c), owns_state(owns) {}
  State* state;
  WakeFn wake;
  void* ctx;
  bool owns_state;
  bool closed = false;
  bool signalled = false;
  std::vector<uint64_t> grants;  // request << 1 | reentrant, in admission order
};

namespace {

struct Entry {
  Client* client;
  uint64_t request;
  uint64_t owner;
  Request req;
};

struct State {
  std::mutex mu;
  std::vector<Entry> active;
  std::vector<Entry> waiting;  // FIFO
  std::vector<Client*> clients;
};

/** The process-wide state: created on first use, never destroyed (other threads may use it until the process ends). */
State& global_state() {
  static State* s = new State();
  return *s;
}

bool held_by(const State& s, uint64_t owner) {
  for (const Entry& a : s.active) {
    if (a.owner == owner) return true;
  }
  return false;
}

bool conflicts_with_active(const State& s, const Request& r, uint64_t owner) {
  for (const Entry& a : s.active) {
    if (a.owner != owner && conflicts(a.req, r)) return true;
  }
  return false;
}

bool conflicts_with_waiters(const State& s, const Request& r, size_t count) {
  for (size_t j = 0; j < count; j++) {
    if (conflicts(s.waiting[j].req, r)) return true;
  }
  return false;
}

/** Admit every waiter R29 allows now, in FIFO order; wake the clients (other than `caller`) that got one. */
void drain(State& s, const Client* caller) {
  size_t i = 0;
  while (i < s.waiting.size()) {
    Entry& w = s.waiting[i];
    const bool held = held_by(s, w.owner);
    if (!conflicts_with_active(s, w.req, w.owner) && (held || !conflicts_with_waiters(s, w.req, i))) {
      Client* c = w.client;
      c->grants.push_back((w.request << 1) | (held ? 1u : 0u));
      s.active.push_back(std::move(w));
      s.waiting.erase(s.waiting.begin() + static_cast<std::ptrdiff_t>(i));
      if (c != caller && !c->signalled) {
        c->signalled = true;
        c->wake(c->ctx);
      }
      i = 0;
      continue;
    }
    i++;
  }
}

int pending(const Client* c) { return c->grants.empty() ? 0 : kGrantsPending; }

/** Copy, then check: a CPU set is 1..kMaxPairs pairs with increasing word indices below kMaxPairs and non-zero masks. */
bool read_request(int exclusive, const uint32_t* pairs, uint32_t npairs, Request* out) {
  if (exclusive != 0) {
    if (npairs != 0) return false;
    out->exclusive = true;
    return true;
  }
  if (pairs == nullptr || npairs == 0 || npairs > kMaxPairs) return false;
  out->pairs.assign(pairs, pairs + size_t{npairs} * 2);
  const std::vector<uint32_t>& p = out->pairs;
  for (size_t k = 0; k < p.size(); k += 2) {
    if (p[k] >= kMaxPairs || p[k + 1] == 0) return false;
    if (k > 0 && p[k] <= p[k - 2]) return false;
  }
  return true;
}

Client* client_open(int isolated, WakeFn wake, void* ctx) {
  if (wake == nullptr) return nullptr;
  Client* c = new (std::nothrow) Client(isolated != 0 ? new (std::nothrow) State() : &global_state(), wake, ctx, isolated != 0);
  if (c == nullptr) return nullptr;
  if (c->state == nullptr) {
    delete c;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(c->state->mu);
  c->state->clients.push_back(c);
  return c;
}

void client_close(Client* c) {
  if (c == nullptr) return;
  State& s = *c->state;
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (c->closed) return;
    c->closed = true;
    auto mine = [c](const Entry& e) { return e.client == c; };
    s.active.erase(std::remove_if(s.active.begin(), s.active.end(), mine), s.active.end());
    s.waiting.erase(std::remove_if(s.waiting.begin(), s.waiting.end(), mine), s.waiting.end());
    s.clients.erase(std::remove(s.clients.begin(), s.clients.end(), c), s.clients.end());
    drain(s, c);
    c->grants.clear();
    last = s.clients.empty();
  }
  if (c->owns_state && last) delete &s;
  delete c;
}

int acquire(Client* c, uint64_t request, uint64_t owner, int exclusive, const uint32_t* pairs, uint32_t npairs) {
  if (c == nullptr || owner == 0) return kInvalid;
  Entry e{c, request, owner, Request{}};
  if (!read_request(exclusive, pairs, npairs, &e.req)) return kInvalid;
  State& s = *c->state;
  std::lock_guard<std::mutex> lock(s.mu);
  if (c->closed) return kInvalid;
  const bool held = held_by(s, owner);
  if (!conflicts_with_active(s, e.req, owner) && (held || !conflicts_with_waiters(s, e.req, s.waiting.size()))) {
    // Fast path (R33), and admission ahead of non-conflicting older waiters (R29).
    s.active.push_back(std::move(e));
    if (!s.waiting.empty()) drain(s, c);
    return kAdmitted | (held ? kReentrant : 0) | pending(c);
  }
  s.waiting.push_back(std::move(e));
  return pending(c);
}

int release(Client* c, uint64_t request) {
  if (c == nullptr) return 0;
  State& s = *c->state;
  std::lock_guard<std::mutex> lock(s.mu);
  for (size_t i = 0; i < s.active.size(); i++) {
    if (s.active[i].client == c && s.active[i].request == request) {
      s.active.erase(s.active.begin() + static_cast<std::ptrdiff_t>(i));
      if (!s.waiting.empty()) drain(s, c);
      break;
    }
  }
  return pending(c);
}

int cancel(Client* c, uint64_t request) {
  if (c == nullptr) return 0;
  State& s = *c->state;
  std::lock_guard<std::mutex> lock(s.mu);
  for (size_t i = 0; i < s.waiting.size(); i++) {
    if (s.waiting[i].client == c && s.waiting[i].request == request) {
      s.waiting.erase(s.waiting.begin() + static_cast<std::ptrdiff_t>(i));
      drain(s, c);
      return kRemoved | pending(c);
    }
  }
  return pending(c);
}

uint32_t take_grants(Client* c, uint64_t* out, uint32_t cap) {
  if (c == nullptr || out == nullptr) return 0;
  std::lock_guard<std::mutex> lock(c->state->mu);
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(cap, c->grants.size()));
  std::copy(c->grants.begin(), c->grants.begin() + n, out);
  c->grants.erase(c->grants.begin(), c->grants.begin() + n);
  if (c->grants.empty()) c->signalled = false;
  return n;
}

void stats(Client* c, uint64_t out[3]) {
  State& s = c == nullptr ? global_state() : *c->state;
  std::lock_guard<std::mutex> lock(s.mu);
  out[0] = s.active.size();
  out[1] = s.waiting.size();
  out[2] = s.clients.size();
}

constexpr uint64_t kMaxOwner = (uint64_t{1} << 53) - 1;
std::atomic<uint64_t> next_owner{1};

uint64_t reserve_owners(uint64_t count, uint64_t floor) {
  if (count == 0 || count > kMaxOwner) return 0;
  uint64_t cur = next_owner.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t first = std::max<uint64_t>({cur, floor, 1});
    if (first > kMaxOwner - count + 1) return 0;
    if (next_owner.compare_exchange_weak(cur, first + count, std::memory_order_relaxed)) return first;
  }
}

ArbiterApi own_api = {kArbiterAbi, sizeof(ArbiterApi), client_open, client_close, acquire, release, cancel, take_grants, stats, reserve_owners};

}  // namespace

}  // namespace arbiter
}  // namespace os

extern "C" __attribute__((visibility("protected"))) const os::arbiter::ArbiterApi* tenferro_os_arbiter_rendezvous(void) {
  return &os::arbiter::own_api;
}

namespace os {
namespace arbiter {

namespace {

using RendezvousFn = const ArbiterApi* (*)(void);

Rendezvous decide() {
  // Tests only: make this copy claim another ABI, to show that a mismatch is refused.
  if (const char* claim = std::getenv("TENFERRO_OS_ARBITER_ABI_CLAIM")) {
    const long v = std::strtol(claim, nullptr, 10);
    if (v > 0 && v < 1000000) own_api.abi = static_cast<uint32_t>(v);
  }
  void* found = dlsym(RTLD_DEFAULT, "tenferro_os_arbiter_rendezvous");
  if (found != nullptr && found != reinterpret_cast<void*>(&tenferro_os_arbiter_rendezvous)) {
    const ArbiterApi* other = reinterpret_cast<RendezvousFn>(found)();
    if (other != nullptr && other->abi == own_api.abi && other->size >= sizeof(ArbiterApi)) return {other, true, other->abi, own_api.abi};
    return {nullptr, false, other == nullptr ? 0 : other->abi, own_api.abi};
  }
  // The first copy: publish. The handle is kept forever (the addon is never unloaded).
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&tenferro_os_arbiter_rendezvous), &info) != 0 && info.dli_fname != nullptr) {
    (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  }
  return {&own_api, false, 0, own_api.abi};
}

__attribute__((constructor)) void decide_at_load() { (void)rendezvous(); }

}  // namespace

const Rendezvous& rendezvous() {
  static const Rendezvous r = decide();
  return r;
}

}  // namespace arbiter
}  // namespace os
