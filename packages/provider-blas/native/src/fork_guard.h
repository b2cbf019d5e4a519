// Keeps fork() out of OpenBLAS calls (see fork_guard.cc).
#pragma once

namespace blas {

/**
 * Register the fork handlers (once per process; call after the runtime's dlopen, so that ours run
 * before the runtime's own prepare handler). Until then CallGuard does nothing.
 */
void install_fork_guard();

/** Held around each call into the runtime: a fork() waits until no such call is in flight. */
class CallGuard {
 public:
  CallGuard();
  ~CallGuard();
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;

 private:
  bool held_ = false;
};

}  // namespace blas
