// info(isa?: number): object | null -- the ISA path: { isa, isaId, bestIsaId, supported, notBuilt, runsNotBuilt }.
// `isa` is an ISA id (0 portable, 1 avx2, 2 avx512f), default the process's best; a path that
// cannot run here gives null. Nothing throws.
#include <napi.h>

#include "tenferro/napi_args.h"

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
  if (!tenferro::isa::supported(static_cast<Isa>(isa))) return env.Null();
  Napi::Object o = Napi::Object::New(env);
  o.Set("isa", engine(static_cast<Isa>(isa)).name);
  o.Set("isaId", isa);
  o.Set("bestIsaId", static_cast<int>(best_isa()));
  // supported, notBuilt (TENFERRO_NATIVE_ISA=host or best) and runsNotBuilt: tenferro/napi_args.h.
  const char* const names[] = {"portable", "avx2", "avx512f"};
  tenferro::napi_args::set_isa_report(o, names);
  return o;
}

}  // namespace js
}  // namespace tprims
