// info(isa?: number): object | null -- the ISA path: { isa, isaId, bestIsaId, supported, notBuilt, runsNotBuilt }.
// `isa` is an ISA id (0 portable, 1 avx2, 2 avx512f), default the process's best; a path that
// cannot run here gives null. Nothing throws.
#include <napi.h>

#include "tprims.h"
#include "tprims_addon.h"

namespace tprims {
namespace js {

Napi::Value info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int isa = best_isa();
  if (info.Length() > 0 && info[0].IsNumber()) {
    const double v = info[0].As<Napi::Number>().DoubleValue();
    if (!(v == 0 || v == 1 || v == 2)) return env.Null();
    isa = static_cast<int>(v);
  }
  if (!isa_supported(static_cast<Isa>(isa))) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("isa", engine(static_cast<Isa>(isa)).name);
  o.Set("isaId", isa);
  o.Set("bestIsaId", static_cast<int>(best_isa()));
  Napi::Object s = Napi::Object::New(env);
  s.Set("portable", isa_supported(kIsaScalar));
  s.Set("avx2", isa_supported(kIsaAvx2));
  s.Set("avx512f", isa_supported(kIsaAvx512));
  o.Set("supported", s);
  // Paths left out of this build (TENFERRO_NATIVE_ISA=host or best), and whether this CPU could run a faster one.
  Napi::Array not_built = Napi::Array::New(env);
  bool runnable_not_built = false;
  const char* names[] = {"portable", "avx2", "avx512f"};
  for (int i = 0; i <= static_cast<int>(kIsaAvx512); ++i) {
    const auto path = static_cast<Isa>(i);
    if (isa_built(path)) continue;
    not_built.Set(not_built.Length(), names[i]);
    // Only a path faster than every built one this CPU runs counts: TENFERRO_NATIVE_ISA=best leaves
    // AVX2 out on an AVX-512 CPU, which then runs the faster AVX-512 path (#39).
    bool faster_built = false;
    for (int k = i + 1; k < kIsaCount; ++k) faster_built = faster_built || isa_supported(static_cast<Isa>(k));
    runnable_not_built = runnable_not_built || (isa_runs_here(path) && !faster_built);
  }
  o.Set("notBuilt", not_built);
  o.Set("runsNotBuilt", runnable_not_built);
  return o;
}

}  // namespace js
}  // namespace tprims
