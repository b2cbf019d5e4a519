/**
 * Complex functions of the reference tensor primitives on (re, im) pairs; each writes its result
 * into `out[0]`, `out[1]`. Formulas (principal branches, as C's `<complex.h>`):
 * - div: Smith's algorithm (scales by the larger part of the divisor);
 * - exp(a+bi) = e^a (cos b + i sin b); log z = log|z| + i·atan2(b, a);
 * - sqrt: the principal root, computed from |z| without cancellation;
 * - sin(a+bi) = sin a cosh b + i cos a sinh b; cos(a+bi) = cos a cosh b − i sin a sinh b;
 * - tanh(a+bi) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b), and sign(a) + 4i·sin b cos b·e^(−2|a|) for |a| > 20;
 * - pow(z, w) = exp(w·log z), with pow(z, 0) = 1 and pow(0, w) = 0 for real w > 0.
 */
export type Pair = Float64Array;

export function cmul(ar: number, ai: number, br: number, bi: number, out: Pair): void {
  out[0] = ar * br - ai * bi;
  out[1] = ar * bi + ai * br;
}

export function cdiv(ar: number, ai: number, br: number, bi: number, out: Pair): void {
  if (Math.abs(br) >= Math.abs(bi)) {
    if (br === 0 && bi === 0) {
      out[0] = ar / 0;
      out[1] = ai / 0;
      return;
    }
    const r = bi / br;
    const d = br + bi * r;
    out[0] = (ar + ai * r) / d;
    out[1] = (ai - ar * r) / d;
  } else {
    const r = br / bi;
    const d = bi + br * r;
    out[0] = (ar * r + ai) / d;
    out[1] = (ai * r - ar) / d;
  }
}

export function cabs(re: number, im: number): number {
  return Math.hypot(re, im);
}

export function cexp(re: number, im: number, out: Pair): void {
  const e = Math.exp(re);
  if (im === 0) {
    out[0] = e;
    out[1] = im;
    return;
  }
  out[0] = e * Math.cos(im);
  out[1] = e * Math.sin(im);
}

export function clog(re: number, im: number, out: Pair): void {
  out[0] = Math.log(Math.hypot(re, im));
  out[1] = Math.atan2(im, re);
}

export function csqrt(re: number, im: number, out: Pair): void {
  if (re === 0 && im === 0) {
    out[0] = 0;
    out[1] = im;
    return;
  }
  const t = Math.sqrt((Math.abs(re) + Math.hypot(re, im)) / 2);
  if (re >= 0) {
    out[0] = t;
    out[1] = im / (2 * t);
  } else {
    out[0] = Math.abs(im) / (2 * t);
    out[1] = im < 0 || Object.is(im, -0) ? -t : t;
  }
}

export function csin(re: number, im: number, out: Pair): void {
  out[0] = Math.sin(re) * Math.cosh(im);
  out[1] = Math.cos(re) * Math.sinh(im);
}

export function ccos(re: number, im: number, out: Pair): void {
  out[0] = Math.cos(re) * Math.cosh(im);
  out[1] = -Math.sin(re) * Math.sinh(im);
}

export function ctanh(re: number, im: number, out: Pair): void {
  if (Math.abs(re) > 20) {
    out[0] = Math.sign(re);
    out[1] = 4 * Math.sin(im) * Math.cos(im) * Math.exp(-2 * Math.abs(re));
    return;
  }
  const d = Math.cosh(2 * re) + Math.cos(2 * im);
  out[0] = Math.sinh(2 * re) / d;
  out[1] = Math.sin(2 * im) / d;
}

export function cpow(ar: number, ai: number, br: number, bi: number, out: Pair): void {
  if (br === 0 && bi === 0) {
    out[0] = 1;
    out[1] = 0;
    return;
  }
  if (ar === 0 && ai === 0) {
    out[0] = bi === 0 && br > 0 ? 0 : NaN;
    out[1] = bi === 0 && br > 0 ? 0 : NaN;
    return;
  }
  clog(ar, ai, out);
  const lr = out[0]!;
  const li = out[1]!;
  cexp(br * lr - bi * li, br * li + bi * lr, out);
}
