// info(isa?: number): object | null -- the ISA path, kernel shapes, blocking and cache sizes
// fmaPeak(seconds: number, isa?: number): number -- single-thread FMA GFLOP/s on this thread
//
// What src/native/load.ts and src/index.ts read about the addon (types: NativeInfo in
// src/native/binding.ts); fmaPeak serves bench/run.mjs. `isa` is an ISA id (0 portable, 1 avx2, 2 avx512f), default the
// process's best; a path that cannot run here gives null / 0. Nothing throws.
#include <napi.h>

#include "tenferro/napi_args.h"

#include "faer_addon.h"
#include "faer_gemm.h"

namespace {

int isa_arg(const Napi::CallbackInfo& info, size_t at) {
  if (info.Length() > at && info[at].IsNumber()) {
    const double v = info[at].As<Napi::Number>().DoubleValue();
    if (v == 0 || v == 1 || v == 2) return static_cast<int>(v);
    return -2;
  }
  return faer::best_isa();
}

Napi::Object shape(Napi::Env env, const faer::KernelShape& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("mr", s.mr);
  o.Set("nr", s.nr);
  return o;
}

Napi::Object block(Napi::Env env, const faer::Blocking& b) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("mc", static_cast<double>(b.mc));
  o.Set("kc", static_cast<double>(b.kc));
  o.Set("nc", static_cast<double>(b.nc));
  o.Set("small", b.small);
  o.Set("smallComplex", b.small_complex);
  o.Set("smallStreamBytes", b.small_stream_bytes);
  return o;
}

}  // namespace

namespace faer {
namespace js {

Napi::Value info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int isa = isa_arg(info, 0);
  if (isa < 0 || !tenferro::isa::supported(static_cast<faer::Isa>(isa))) return env.Null();
  const faer::IsaEngine& e = faer::engine(static_cast<faer::Isa>(isa));
  Napi::Object o = Napi::Object::New(env);
  o.Set("isa", e.name);
  o.Set("isaId", isa);
  o.Set("bestIsaId", static_cast<int>(faer::best_isa()));
  // supported, notBuilt (TENFERRO_NATIVE_ISA=host or best) and runsNotBuilt: tenferro/napi_args.h.
  const char* const names[] = {"portable", "avx2", "avx512f"};
  tenferro::napi_args::set_isa_report(o, names);
  Napi::Object shapes = Napi::Object::New(env);
  shapes.Set("f32", shape(env, e.f32));
  shapes.Set("f64", shape(env, e.f64));
  o.Set("kernel", shapes);
  Napi::Object bl = Napi::Object::New(env);
  bl.Set("f32", block(env, faer::blocking(static_cast<faer::Isa>(isa), 4)));
  bl.Set("f64", block(env, faer::blocking(static_cast<faer::Isa>(isa), 8)));
  o.Set("blocking", bl);
  const faer::CacheInfo& c = faer::cache_info();
  Napi::Object cache = Napi::Object::New(env);
  cache.Set("l1d", static_cast<double>(c.l1d));
  cache.Set("l2", static_cast<double>(c.l2));
  cache.Set("l3", static_cast<double>(c.l3));
  cache.Set("fromSysfs", c.from_sysfs);
  o.Set("cache", cache);
  return o;
}

Napi::Value fma_peak(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double seconds = 0.5;
  if (info.Length() > 0 && info[0].IsNumber()) seconds = info[0].As<Napi::Number>().DoubleValue();
  if (!(seconds > 0 && seconds <= 60)) seconds = 0.5;
  const int isa = isa_arg(info, 1);
  if (isa < 0 || !tenferro::isa::supported(static_cast<faer::Isa>(isa))) return Napi::Number::New(env, 0);
  return Napi::Number::New(env, faer::engine(static_cast<faer::Isa>(isa)).fma_peak(seconds));
}

}  // namespace js
}  // namespace faer
