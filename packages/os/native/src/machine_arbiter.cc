// @tenferro/os: the machine-wide arbiter's state, rule and crash recovery (machine_arbiter.h, #41).
//
// The rule is arbiter.cc's, entry for entry (contract R27–R33): permits of different owners whose
// requests conflict are never held together; a waiter is admitted when no held permit of another
// owner conflicts and no older waiter conflicts (waived when its owner already holds a permit);
// an uncontended request is admitted without a queue entry, and a release scans the queue only
// when someone waits. Owners are machine-unique: (process slot, owner id), where a process slot
// records the pid and the process start time (/proc/<pid>/stat field 22), so a recycled pid is a
// different process.
//
// The state is one fixed-size segment (no pointers in it): process slots, client slots (one per
// isolate and copy of core), and entries (held or waiting permits, CPU sets as 1024-bit masks; a
// request naming a CPU ≥ 1024 is treated as provider-exclusive, which is never less safe). It is
// guarded by one PTHREAD_PROCESS_SHARED, PTHREAD_MUTEX_ROBUST mutex: a process killed while
// holding it hands the next locker EOWNERDEAD, which repairs the state (every change is a single
// word flip written last — an entry's state, after its other fields — so a half-done step leaves
// either the old or the new entry), reaps dead processes, re-runs admission and wakes everyone.
// A process killed while it holds permits (not the lock) is found by the waiter threads of
// processes that wait: every 10 ms while they have waiters they check each joined process's pid
// and start time and reap the dead (their permits and waiters go, which admits the waiters they
// blocked). Pid liveness does not cross PID namespaces: the segment records its creator's
// /proc/self/ns/pid and a process of another namespace is refused ("pid-namespace").
//
// Wake-ups never block the event loop: a waiter admitted by a release of this process is woken
// through its client's WakeFn (a thread-safe function), one admitted by another process's release
// through that process's futex word (a FUTEX_WAKE on the shared page), which its waiter thread —
// one per joined process, with every signal blocked — turns into WakeFn calls.
#include "machine_arbiter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace os {
namespace machine {

namespace {

constexpr uint32_t kMagic = 0x414d4674;  // "tFMA"
constexpr uint32_t kMaxProcs = 64;
constexpr uint32_t kMaxClients = 256;
constexpr uint32_t kMaxEntries = 1024;
constexpr uint32_t kWords = 32;  // 1024 CPUs
constexpr uint32_t kNone = UINT32_MAX;

constexpr uint32_t kFree = 0, kWaiting = 1, kActive = 2;
constexpr uint32_t kExclusive = 1, kGranted = 2, kReentrantFlag = 4;
constexpr int kFull = -2;  // no entry left (acquire)

struct ProcSlot {
  uint32_t state;     // kFree or 1 (joined)
  uint32_t wake_seq;  // the futex word its waiter thread sleeps on
  int32_t pid;
  uint32_t pad;
  uint64_t start_time;  // clock ticks after boot (/proc/<pid>/stat field 22)
  uint64_t since_ms;
};

struct ClientSlot {
  uint32_t state;  // kFree or 1
  uint32_t proc;
  uint32_t signalled;  // woken for grants not yet taken
  uint32_t grants;     // admitted from the queue, not yet taken
};

struct Entry {
  uint32_t state;  // kFree, kWaiting, kActive — written last
  uint32_t client;
  uint32_t proc;
  uint32_t flags;
  uint64_t request;
  uint64_t owner;
  uint64_t seq;  // FIFO position while waiting; admission order once granted
  uint64_t since_ms;
  uint32_t lo, hi;  // the mask's non-zero word range
  uint32_t mask[kWords];
};

struct Segment {
  uint32_t magic;
  uint32_t abi;
  uint32_t size;
  uint32_t pad;
  uint64_t pidns_dev;
  uint64_t pidns_ino;
  pthread_mutex_t mu;
  uint64_t next_seq;
  uint32_t hi;  // entries[hi..] are free
  uint32_t n_waiting;
  ProcSlot procs[kMaxProcs];
  ClientSlot clients[kMaxClients];
  Entry entries[kMaxEntries];
};

struct MClient;

/** One process's view of a segment: the joined one, or a private anonymous one (isolated clients). */
struct Mapping {
  Segment* seg = nullptr;
  bool isolated = false;
  uint32_t me = 0;                         // this process's slot
  MClient* locals[kMaxClients] = {};       // this process's clients by slot (guarded by seg->mu)
  uint32_t nclients = 0;                   // guarded by seg->mu
};

struct MClient {
  Mapping* m;
  uint32_t slot;
  arbiter::WakeFn wake;
  void* ctx;
  bool closed;
};

std::mutex join_mu;
Mapping* joined = nullptr;  // set once, under join_mu; never unmapped
std::string joined_path_name;

uint32_t own_abi() {
  static const uint32_t abi = [] {
    // Tests only: make this copy claim another layout, to show that a mismatch is refused.
    if (const char* claim = std::getenv("TENFERRO_OS_MACHINE_ABI_CLAIM")) {
      const long v = std::strtol(claim, nullptr, 10);
      if (v > 0 && v < 1000000) return static_cast<uint32_t>(v);
    }
    return kMachineAbi;
  }();
  return abi;
}

uint64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

long futex(uint32_t* addr, int op, uint32_t val, const timespec* ts) { return syscall(SYS_futex, addr, op, val, ts, nullptr, 0); }

/**
 * State char and start time of `pid`: false when they could not be read, and then `*gone` says
 * whether that is because the process is gone (no /proc entry: ENOENT on open, ESRCH or nothing to
 * read) rather than a failure of this process (EMFILE, ENFILE, ENOMEM, EINTR, …).
 */
bool read_stat(int32_t pid, char* state, uint64_t* start, bool* gone) {
  *gone = false;
  char path[64];
  if (pid <= 0) std::snprintf(path, sizeof path, "/proc/self/stat");
  else std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *gone = errno == ENOENT || errno == ESRCH;
    return false;
  }
  char buf[1024];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  const int readErrno = errno;
  close(fd);
  if (n <= 0) {
    *gone = n == 0 || readErrno == ESRCH;
    return false;
  }
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  if (p == nullptr || p[1] != ' ') return false;
  p += 2;
  *state = *p;
  // Field 3 is the state; the start time is field 22.
  for (int field = 3; field < 22; field++) {
    p = std::strchr(p, ' ');
    if (p == nullptr) return false;
    p++;
  }
  *start = std::strtoull(p, nullptr, 10);
  return true;
}

/**
 * The process (pid, start time) still runs: not gone, not a zombie, not a recycled pid. When its
 * /proc entry cannot be read for a reason of this process's own (out of file descriptors), it counts
 * as alive: reaping a live holder would admit a conflicting permit; a dead one is reaped by the next
 * check that can read.
 */
bool alive(int32_t pid, uint64_t start) {
  char state = 0;
  uint64_t s = 0;
  bool gone = false;
  if (!read_stat(pid, &state, &s, &gone)) return !gone;
  if (state == 'Z' || state == 'X' || state == 'x') return false;
  return s == start;
}

bool conflicts(const Entry& a, const Entry& b) {
  if (((a.flags | b.flags) & kExclusive) != 0) return true;
  const uint32_t lo = a.lo > b.lo ? a.lo : b.lo;
  const uint32_t hi = a.hi < b.hi ? a.hi : b.hi;
  for (uint32_t w = lo; w < hi; w++) {
    if ((a.mask[w] & b.mask[w]) != 0) return true;
  }
  return false;
}

void store_state(Entry& e, uint32_t s) { __atomic_store_n(&e.state, s, __ATOMIC_RELEASE); }

bool held_by(const Segment& s, uint32_t proc, uint64_t owner) {
  for (uint32_t i = 0; i < s.hi; i++) {
    const Entry& a = s.entries[i];
    if (a.state == kActive && a.proc == proc && a.owner == owner) return true;
  }
  return false;
}

bool conflicts_with_active(const Segment& s, const Entry& r) {
  for (uint32_t i = 0; i < s.hi; i++) {
    const Entry& a = s.entries[i];
    if (a.state == kActive && !(a.proc == r.proc && a.owner == r.owner) && conflicts(a, r)) return true;
  }
  return false;
}

/** The waiting entries' indices in FIFO order; answers how many. */
uint32_t waiting_order(const Segment& s, uint16_t* order) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s.hi; i++) {
    if (s.entries[i].state != kWaiting) continue;
    uint32_t j = n++;
    while (j > 0 && s.entries[order[j - 1]].seq > s.entries[i].seq) {
      order[j] = order[j - 1];
      j--;
    }
    order[j] = static_cast<uint16_t>(i);
  }
  return n;
}

bool conflicts_with_waiters(const Segment& s, const Entry& r) {
  if (s.n_waiting == 0) return false;
  for (uint32_t i = 0; i < s.hi; i++) {
    if (s.entries[i].state == kWaiting && conflicts(s.entries[i], r)) return true;
  }
  return false;
}

void wake_proc(Segment& s, uint32_t proc) {
  __atomic_add_fetch(&s.procs[proc].wake_seq, 1, __ATOMIC_SEQ_CST);
  futex(&s.procs[proc].wake_seq, FUTEX_WAKE, INT_MAX, nullptr);
}

/** Tell client `c` (not the caller) that it has grants: directly in this process, else through its process's futex. */
void signal_client(Mapping* m, uint32_t c, uint32_t caller) {
  Segment& s = *m->seg;
  ClientSlot& cs = s.clients[c];
  if (c == caller || cs.signalled != 0) return;
  cs.signalled = 1;
  if (cs.proc == m->me) {
    MClient* l = m->locals[c];
    if (l != nullptr) l->wake(l->ctx);
  } else {
    wake_proc(s, cs.proc);
  }
}

/** Admit every waiter R29 allows now, in FIFO order, restarting from the front after each admission. */
void drain(Mapping* m, uint32_t caller) {
  Segment& s = *m->seg;
  uint16_t order[kMaxEntries];
  for (;;) {
    const uint32_t n = waiting_order(s, order);
    bool admitted = false;
    for (uint32_t i = 0; i < n && !admitted; i++) {
      Entry& w = s.entries[order[i]];
      const bool held = held_by(s, w.proc, w.owner);
      if (conflicts_with_active(s, w)) continue;
      if (!held) {
        bool older = false;
        for (uint32_t j = 0; j < i && !older; j++) older = conflicts(s.entries[order[j]], w);
        if (older) continue;
      }
      w.flags |= kGranted | (held ? kReentrantFlag : 0);
      w.seq = s.next_seq++;
      w.since_ms = now_ms();
      s.clients[w.client].grants++;
      store_state(w, kActive);
      s.n_waiting--;
      signal_client(m, w.client, caller);
      admitted = true;
    }
    if (!admitted) return;
  }
}

/** Free every entry and client of process slot `p` (dead), and the slot. */
void reap(Segment& s, uint32_t p) {
  for (uint32_t i = 0; i < s.hi; i++) {
    Entry& e = s.entries[i];
    if (e.state != kFree && e.proc == p) {
      if (e.state == kWaiting) s.n_waiting--;
      store_state(e, kFree);
    }
  }
  for (uint32_t c = 0; c < kMaxClients; c++) {
    if (s.clients[c].state != 0 && s.clients[c].proc == p) s.clients[c].state = 0;
  }
  s.procs[p].state = 0;
}

/** Repairs this process made (`lock_repairs`). */
std::atomic<uint64_t> repairs{0};

/** After a holder of the lock died: make the derived fields consistent again, reap the dead, re-admit, wake all. */
void repair(Mapping* m) {
  repairs.fetch_add(1, std::memory_order_relaxed);
  Segment& s = *m->seg;
  uint32_t hi = 0, waiting = 0;
  for (uint32_t c = 0; c < kMaxClients; c++) s.clients[c].grants = 0;
  for (uint32_t i = 0; i < kMaxEntries; i++) {
    Entry& e = s.entries[i];
    if (e.state == kFree) continue;
    hi = i + 1;
    if (e.state == kWaiting) {
      e.flags &= ~(kGranted | kReentrantFlag);
      waiting++;
    } else if ((e.flags & kGranted) != 0) {
      s.clients[e.client].grants++;
    }
  }
  s.hi = hi;
  s.n_waiting = waiting;
  if (!m->isolated) {
    for (uint32_t p = 0; p < kMaxProcs; p++) {
      if (s.procs[p].state != 0 && p != m->me && !alive(s.procs[p].pid, s.procs[p].start_time)) reap(s, p);
    }
  }
  drain(m, kNone);
  for (uint32_t c = 0; c < kMaxClients; c++) {
    if (s.clients[c].state != 0 && s.clients[c].grants > 0) {
      s.clients[c].signalled = 0;
      signal_client(m, c, kNone);
    }
  }
}

bool lock(Mapping* m) {
  const int r = pthread_mutex_lock(&m->seg->mu);
  if (r == EOWNERDEAD) {
    repair(m);
    pthread_mutex_consistent(&m->seg->mu);
    return true;
  }
  return r == 0;
}

void unlock(Mapping* m) { pthread_mutex_unlock(&m->seg->mu); }

/** Reap the joined processes that died (checked outside the lock, reaped under it if still the same process). */
void sweep(Mapping* m) {
  struct Seen {
    uint32_t slot;
    int32_t pid;
    uint64_t start;
  } seen[kMaxProcs];
  uint32_t n = 0;
  if (!lock(m)) return;
  for (uint32_t p = 0; p < kMaxProcs; p++) {
    const ProcSlot& ps = m->seg->procs[p];
    if (ps.state != 0 && p != m->me) seen[n++] = {p, ps.pid, ps.start_time};
  }
  unlock(m);
  uint32_t dead[kMaxProcs];
  uint32_t nd = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (!alive(seen[i].pid, seen[i].start)) dead[nd++] = i;
  }
  if (nd == 0 || !lock(m)) return;
  Segment& s = *m->seg;
  for (uint32_t k = 0; k < nd; k++) {
    const Seen& d = seen[dead[k]];
    if (s.procs[d.slot].state != 0 && s.procs[d.slot].pid == d.pid && s.procs[d.slot].start_time == d.start) reap(s, d.slot);
  }
  if (s.n_waiting > 0) drain(m, kNone);
  unlock(m);
}

uint32_t pending_flag(const Segment& s, uint32_t c) { return s.clients[c].grants > 0 ? arbiter::kGrantsPending : 0; }

void init_segment(Segment* s, uint32_t abi) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&s->mu, &attr);
  pthread_mutexattr_destroy(&attr);
  struct stat ns;
  if (stat("/proc/self/ns/pid", &ns) == 0) {
    s->pidns_dev = static_cast<uint64_t>(ns.st_dev);
    s->pidns_ino = static_cast<uint64_t>(ns.st_ino);
  }
  s->next_seq = 1;
  s->size = sizeof(Segment);
  s->abi = abi;
  __atomic_store_n(&s->magic, kMagic, __ATOMIC_RELEASE);
}

// ---- the client table (ArbiterApi signatures) ----

MClient* as_client(arbiter::Client* c) { return reinterpret_cast<MClient*>(c); }

arbiter::Client* client_open(int isolated, arbiter::WakeFn wake, void* ctx) {
  if (wake == nullptr) return nullptr;
  Mapping* m = nullptr;
  if (isolated != 0) {
    void* mem = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return nullptr;
    m = new (std::nothrow) Mapping();
    if (m == nullptr) {
      munmap(mem, sizeof(Segment));
      return nullptr;
    }
    m->seg = static_cast<Segment*>(mem);
    m->isolated = true;
    init_segment(m->seg, own_abi());
    m->seg->procs[0].state = 1;
    m->seg->procs[0].pid = getpid();
  } else {
    std::lock_guard<std::mutex> g(join_mu);
    m = joined;
  }
  if (m == nullptr) return nullptr;
  MClient* c = new (std::nothrow) MClient{m, kNone, wake, ctx, false};
  if (c == nullptr || !lock(m)) {
    delete c;
    return nullptr;
  }
  Segment& s = *m->seg;
  for (uint32_t i = 0; i < kMaxClients; i++) {
    if (s.clients[i].state == 0) {
      s.clients[i] = ClientSlot{1, m->me, 0, 0};
      c->slot = i;
      break;
    }
  }
  if (c->slot != kNone) {
    m->locals[c->slot] = c;
    m->nclients++;
  }
  unlock(m);
  if (c->slot == kNone) {
    delete c;
    return nullptr;
  }
  return reinterpret_cast<arbiter::Client*>(c);
}

void client_close(arbiter::Client* cc) {
  MClient* c = as_client(cc);
  if (c == nullptr) return;
  Mapping* m = c->m;
  bool last = false;
  if (lock(m)) {
    if (c->closed) {
      unlock(m);
      return;
    }
    c->closed = true;
    Segment& s = *m->seg;
    for (uint32_t i = 0; i < s.hi; i++) {
      Entry& e = s.entries[i];
      if (e.state != kFree && e.client == c->slot && e.proc == m->me) {
        if (e.state == kWaiting) s.n_waiting--;
        store_state(e, kFree);
      }
    }
    s.clients[c->slot].state = 0;
    m->locals[c->slot] = nullptr;
    m->nclients--;
    if (s.n_waiting > 0) drain(m, c->slot);
    last = m->isolated && m->nclients == 0;
    unlock(m);
  }
  if (last) {
    pthread_mutex_destroy(&m->seg->mu);
    munmap(m->seg, sizeof(Segment));
    delete m;
  }
  delete c;
}

/** A free entry slot (raising the high watermark), or kNone. */
uint32_t free_entry(Segment& s) {
  for (uint32_t i = 0; i < s.hi; i++) {
    if (s.entries[i].state == kFree) return i;
  }
  if (s.hi < kMaxEntries) return s.hi++;
  return kNone;
}

int acquire(arbiter::Client* cc, uint64_t request, uint64_t owner, int exclusive, const uint32_t* pairs, uint32_t npairs) {
  MClient* c = as_client(cc);
  if (c == nullptr || owner == 0) return arbiter::kInvalid;
  Entry e;
  std::memset(&e, 0, sizeof e);
  if (exclusive != 0) {
    if (npairs != 0) return arbiter::kInvalid;
    e.flags = kExclusive;
  } else {
    if (pairs == nullptr || npairs == 0 || npairs > arbiter::kMaxPairs) return arbiter::kInvalid;
    uint32_t prev = 0;
    for (uint32_t k = 0; k < npairs; k++) {
      const uint32_t word = pairs[2 * k], mask = pairs[2 * k + 1];  // copied once, then checked
      if (word >= arbiter::kMaxPairs || mask == 0 || (k > 0 && word <= prev)) return arbiter::kInvalid;
      prev = word;
      if (word >= kWords) {
        e.flags = kExclusive;  // beyond the segment's 1024 CPUs: exclusive (never less safe)
        continue;
      }
      e.mask[word] = mask;
      if (k == 0) e.lo = word;
      e.hi = word + 1;
    }
  }
  Mapping* m = c->m;
  e.client = c->slot;
  e.proc = m->me;
  e.request = request;
  e.owner = owner;
  e.since_ms = now_ms();
  if (!lock(m)) return arbiter::kInvalid;
  if (c->closed) {
    unlock(m);
    return arbiter::kInvalid;
  }
  Segment& s = *m->seg;
  const bool held = held_by(s, e.proc, owner);
  const bool admit = !conflicts_with_active(s, e) && (held || !conflicts_with_waiters(s, e));
  const uint32_t slot = free_entry(s);
  if (slot == kNone) {
    unlock(m);
    return kFull;
  }
  Entry& dst = s.entries[slot];
  std::memcpy(reinterpret_cast<char*>(&dst) + sizeof(uint32_t), reinterpret_cast<const char*>(&e) + sizeof(uint32_t), sizeof(Entry) - sizeof(uint32_t));
  int out;
  if (admit) {
    // Fast path (R33), and admission ahead of non-conflicting older waiters (R29).
    dst.seq = s.next_seq++;
    store_state(dst, kActive);
    if (s.n_waiting > 0) drain(m, c->slot);
    out = arbiter::kAdmitted | (held ? arbiter::kReentrant : 0) | static_cast<int>(pending_flag(s, c->slot));
  } else {
    dst.seq = s.next_seq++;
    store_state(dst, kWaiting);
    s.n_waiting++;
    out = static_cast<int>(pending_flag(s, c->slot));
  }
  unlock(m);
  // A waiter: this process's waiter thread starts watching the holders' liveness.
  if (!admit && !m->isolated) wake_proc(s, m->me);
  return out;
}

int release(arbiter::Client* cc, uint64_t request) {
  MClient* c = as_client(cc);
  if (c == nullptr) return 0;
  Mapping* m = c->m;
  if (!lock(m)) return 0;
  Segment& s = *m->seg;
  for (uint32_t i = 0; i < s.hi; i++) {
    Entry& e = s.entries[i];
    if (e.state == kActive && e.client == c->slot && e.proc == m->me && e.request == request) {
      if ((e.flags & kGranted) != 0 && s.clients[c->slot].grants > 0) s.clients[c->slot].grants--;
      store_state(e, kFree);
      if (i + 1 == s.hi) {
        while (s.hi > 0 && s.entries[s.hi - 1].state == kFree) s.hi--;
      }
      if (s.n_waiting > 0) drain(m, c->slot);
      break;
    }
  }
  const int out = static_cast<int>(pending_flag(s, c->slot));
  unlock(m);
  return out;
}

int cancel(arbiter::Client* cc, uint64_t request) {
  MClient* c = as_client(cc);
  if (c == nullptr) return 0;
  Mapping* m = c->m;
  if (!lock(m)) return 0;
  Segment& s = *m->seg;
  int out = 0;
  for (uint32_t i = 0; i < s.hi; i++) {
    Entry& e = s.entries[i];
    if (e.state == kWaiting && e.client == c->slot && e.proc == m->me && e.request == request) {
      store_state(e, kFree);
      s.n_waiting--;
      drain(m, c->slot);
      out = arbiter::kRemoved;
      break;
    }
  }
  out |= static_cast<int>(pending_flag(s, c->slot));
  unlock(m);
  return out;
}

uint32_t take_grants(arbiter::Client* cc, uint64_t* out, uint32_t cap) {
  MClient* c = as_client(cc);
  if (c == nullptr || out == nullptr) return 0;
  Mapping* m = c->m;
  if (!lock(m)) return 0;
  Segment& s = *m->seg;
  uint32_t n = 0;
  while (n < cap && s.clients[c->slot].grants > 0) {
    // The oldest admission of this client not yet taken.
    Entry* best = nullptr;
    for (uint32_t i = 0; i < s.hi; i++) {
      Entry& e = s.entries[i];
      if (e.state == kActive && e.client == c->slot && e.proc == m->me && (e.flags & kGranted) != 0 && (best == nullptr || e.seq < best->seq)) best = &e;
    }
    if (best == nullptr) {
      s.clients[c->slot].grants = 0;
      break;
    }
    out[n++] = (best->request << 1) | ((best->flags & kReentrantFlag) != 0 ? 1u : 0u);
    best->flags &= ~(kGranted | kReentrantFlag);
    s.clients[c->slot].grants--;
  }
  if (s.clients[c->slot].grants == 0) s.clients[c->slot].signalled = 0;
  unlock(m);
  return n;
}

void stats(arbiter::Client* cc, uint64_t out[3]) {
  out[0] = out[1] = out[2] = 0;
  MClient* c = as_client(cc);
  if (c == nullptr || !lock(c->m)) return;
  const Segment& s = *c->m->seg;
  for (uint32_t i = 0; i < s.hi; i++) {
    if (s.entries[i].state == kActive) out[0]++;
    else if (s.entries[i].state == kWaiting) out[1]++;
  }
  for (uint32_t i = 0; i < kMaxClients; i++) out[2] += s.clients[i].state != 0 ? 1 : 0;
  unlock(c->m);
}

uint64_t reserve_owners(uint64_t count, uint64_t floor) {
  const arbiter::ArbiterApi* p = arbiter::rendezvous().api;
  return p == nullptr ? 0 : p->reserve_owners(count, floor);
}

arbiter::ArbiterApi machine_api = {kMachineAbi, sizeof(arbiter::ArbiterApi), client_open, client_close, acquire, release, cancel, take_grants, stats, reserve_owners};

// ---- the waiter thread of a joined process ----

void* waiter_main(void* arg) {
  Mapping* m = static_cast<Mapping*>(arg);
  Segment& s = *m->seg;
  uint32_t* word = &s.procs[m->me].wake_seq;
  for (;;) {
    const uint32_t seen = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    bool waiters = false;
    if (lock(m)) {
      for (uint32_t c = 0; c < kMaxClients; c++) {
        if (s.clients[c].state != 0 && s.clients[c].proc == m->me && s.clients[c].grants > 0 && m->locals[c] != nullptr) {
          m->locals[c]->wake(m->locals[c]->ctx);
        }
      }
      for (uint32_t i = 0; i < s.hi && !waiters; i++) waiters = s.entries[i].state == kWaiting && s.entries[i].proc == m->me;
      unlock(m);
    }
    if (waiters) {
      const timespec ts{0, 10 * 1000 * 1000};
      if (futex(word, FUTEX_WAIT, seen, &ts) != 0 && errno == ETIMEDOUT) sweep(m);
    } else {
      futex(word, FUTEX_WAIT, seen, nullptr);
    }
  }
  return nullptr;
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    if (!ok) return false;
  }
  return true;
}

JoinResult fail(const char* code, std::string message) {
  JoinResult r;
  r.error = code;
  r.message = std::move(message);
  return r;
}

}  // namespace

const arbiter::ArbiterApi* api() { return &machine_api; }

std::string joined_name() {
  std::lock_guard<std::mutex> g(join_mu);
  return joined == nullptr ? std::string() : joined_path_name;
}

JoinResult join(const std::string& name, bool group) {
  if (!valid_name(name)) return fail("invalid-name", "a machine arbiter name is 1 to 64 of A-Z a-z 0-9 . _ - and does not start with '.'");
  std::lock_guard<std::mutex> g(join_mu);
  const std::string path = "/tenferro-" + name;
  if (joined != nullptr) {
    if (joined_path_name == name) {
      JoinResult r;
      r.path = "/dev/shm" + path;
      return r;
    }
    return fail("joined-other", "this process already joined the machine arbiter '" + joined_path_name + "'");
  }
  if (const arbiter::ArbiterApi* p = arbiter::rendezvous().api) {
    uint64_t st[3];
    p->stats(nullptr, st);
    if (st[2] > 0) return fail("process-arbiter-in-use", "this process already uses its process-wide arbiter (a backend or a processArbiter() client exists)");
  }
  const mode_t mode = group ? 0660 : 0600;
  const int fd = shm_open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, mode);
  if (fd < 0) return fail("open-failed", "shm_open(" + path + "): " + std::strerror(errno));
  flock(fd, LOCK_EX);
  struct stat st;
  Segment* seg = nullptr;
  JoinResult bad;
  if (fstat(fd, &st) != 0) {
    bad = fail("open-failed", std::string("fstat: ") + std::strerror(errno));
  } else if (st.st_size == 0) {
    if (ftruncate(fd, sizeof(Segment)) != 0) {
      bad = fail("open-failed", std::string("ftruncate: ") + std::strerror(errno));
    } else {
      void* mem = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (mem == MAP_FAILED) {
        bad = fail("open-failed", std::string("mmap: ") + std::strerror(errno));
      } else {
        seg = static_cast<Segment*>(mem);
        init_segment(seg, own_abi());
        if (st.st_uid == geteuid()) fchmod(fd, mode);  // the mode, whatever the umask
      }
    }
  } else if (static_cast<size_t>(st.st_size) < 16) {
    bad = fail("abi-mismatch", "the segment is too small to be a tenferro machine arbiter");
  } else {
    const size_t size = static_cast<size_t>(st.st_size);
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) {
      bad = fail("open-failed", std::string("mmap: ") + std::strerror(errno));
    } else {
      const uint32_t* head = static_cast<const uint32_t*>(mem);
      if (head[0] != kMagic || head[1] != own_abi() || size != sizeof(Segment) || head[2] != sizeof(Segment)) {
        bad = fail("abi-mismatch", "the machine arbiter segment " + path + " has another layout (another tenferro version)");
        bad.other_abi = head[0] == kMagic ? head[1] : 0;
        munmap(mem, size);
      } else {
        seg = static_cast<Segment*>(mem);
      }
    }
  }
  flock(fd, LOCK_UN);
  close(fd);
  if (seg == nullptr) return bad;
  struct stat ns;
  if (stat("/proc/self/ns/pid", &ns) != 0 || static_cast<uint64_t>(ns.st_dev) != seg->pidns_dev || static_cast<uint64_t>(ns.st_ino) != seg->pidns_ino) {
    munmap(seg, sizeof(Segment));
    return fail("pid-namespace", "the segment " + path + " was created in another PID namespace (another container): pid liveness does not cross PID namespaces, so this process cannot join it");
  }
  char state = 0;
  uint64_t start = 0;
  bool gone = false;
  if (!read_stat(0, &state, &start, &gone)) {
    munmap(seg, sizeof(Segment));
    return fail("open-failed", "cannot read /proc/self/stat (the process start time)");
  }
  Mapping* m = new Mapping();
  m->seg = seg;
  m->me = kNone;
  for (int attempt = 0; attempt < 2 && m->me == kNone; attempt++) {
    if (attempt == 1) sweep(m);
    if (!lock(m)) break;
    for (uint32_t p = 0; p < kMaxProcs; p++) {
      if (seg->procs[p].state == 0) {
        ProcSlot& ps = seg->procs[p];
        ps.pid = getpid();
        ps.start_time = start;
        ps.since_ms = now_ms();
        ps.state = 1;
        m->me = p;
        break;
      }
    }
    unlock(m);
  }
  if (m->me == kNone) {
    munmap(seg, sizeof(Segment));
    delete m;
    return fail("full", "the machine arbiter has no free process slot (64 joined processes)");
  }
  // The waiter thread: every signal blocked (they stay Node's), detached, lives as long as the process.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t t;
  const int rc = pthread_create(&t, &attr, waiter_main, m);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    if (lock(m)) {
      seg->procs[m->me].state = 0;
      unlock(m);
    }
    munmap(seg, sizeof(Segment));
    delete m;
    return fail("open-failed", std::string("cannot start the waiter thread: ") + std::strerror(rc));
  }
  joined = m;
  joined_path_name = name;
  JoinResult r;
  r.path = "/dev/shm" + path;
  return r;
}

uint64_t lock_repairs() { return repairs.load(std::memory_order_relaxed); }

bool census(std::vector<CensusEntry>* entries, std::vector<int32_t>* pids) {
  Mapping* m;
  {
    std::lock_guard<std::mutex> g(join_mu);
    m = joined;
  }
  if (m == nullptr) return false;
  sweep(m);
  if (!lock(m)) return false;
  const Segment& s = *m->seg;
  for (uint32_t p = 0; p < kMaxProcs; p++) {
    if (s.procs[p].state != 0) pids->push_back(s.procs[p].pid);
  }
  for (uint32_t i = 0; i < s.hi; i++) {
    const Entry& e = s.entries[i];
    if (e.state == kFree) continue;
    CensusEntry c;
    c.pid = s.procs[e.proc].pid;
    c.holds = e.state == kActive;
    c.exclusive = (e.flags & kExclusive) != 0;
    c.since_ms = e.since_ms;
    for (uint32_t w = e.lo; w < e.hi; w++) {
      for (uint32_t b = 0; b < 32; b++) {
        if ((e.mask[w] >> b) & 1u) c.cpus.push_back(w * 32 + b);
      }
    }
    entries->push_back(std::move(c));
  }
  unlock(m);
  return true;
}

}  // namespace machine
}  // namespace os
