// Keeps fork() out of OpenBLAS calls.
//
// OpenBLAS registers pthread_atfork(blas_thread_shutdown, ...) when it loads: before any fork()
// in the process it stops its thread pool, so that the child starts clean. A fork() while a
// threaded call runs on another thread — Node's child_process.spawn/exec/execSync fork on the
// main thread while an engine worker is inside cblas_dgemm — stops the helper threads that call
// is waiting for: the call then spins in exec_blas_async forever (measured: a 2-thread
// 1024×1024 dgemm and spawnSync('true') hung every time; OpenMathLib/OpenBLAS#294, #5520).
//
// The guard: each call into the runtime holds a read lock; our prepare handler takes the write
// lock, so a fork waits for the calls in flight to end and new calls wait for the fork (the
// parent and child handlers release it). Handlers registered later run their prepare step
// earlier, so ours — registered after the runtime's dlopen — runs before OpenBLAS's shutdown.
// Writers are preferred: two workers calling back to back cannot starve a fork. Calls never nest
// (one per ThreadScope), so a reader never blocks behind a waiting writer while holding the lock.
//
// Only for OpenBLAS: a runtime that loads libraries lazily inside a call (MKL's dispatcher, its
// OpenMP runtime) may register fork handlers there, which glibc serialises with the fork's own
// prepare step — waiting for such a call from a prepare handler could deadlock.
#include "fork_guard.h"

#include <pthread.h>

#include <atomic>

namespace blas {
namespace {

pthread_rwlock_t g_lock;
std::atomic<bool> g_active{false};

void prepare() { pthread_rwlock_wrlock(&g_lock); }
void release() { pthread_rwlock_unlock(&g_lock); }

}  // namespace

void install_fork_guard() {
  static bool installed = false;  // load() calls this under its mutex, once
  if (installed) return;
  installed = true;
  pthread_rwlockattr_t attr;
  pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
  pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
  pthread_rwlock_init(&g_lock, &attr);
  pthread_rwlockattr_destroy(&attr);
  if (pthread_atfork(prepare, release, release) == 0) g_active.store(true, std::memory_order_release);
}

CallGuard::CallGuard() {
  if (g_active.load(std::memory_order_acquire)) held_ = pthread_rwlock_rdlock(&g_lock) == 0;
}

CallGuard::~CallGuard() {
  if (held_) pthread_rwlock_unlock(&g_lock);
}

}  // namespace blas
