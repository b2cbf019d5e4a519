/** Types of scripts/detect-blas.mjs (the one BLAS detection, shared by binding.gyp, the build and the run time). */
export interface BlasDetectionAttempt {
  readonly candidate: string;
  readonly reason: string;
}

export interface BlasFound {
  readonly found: true;
  readonly vendor: 'mkl' | 'blas' | 'openblas' | 'blis';
  readonly source: string;
  readonly header: 'cblas.h' | 'mkl_cblas.h';
  readonly headerPath: string;
  readonly includeDirs: readonly string[];
  readonly cflags: readonly string[];
  readonly libs: readonly string[];
  readonly defines: readonly string[];
  readonly tried: readonly BlasDetectionAttempt[];
}

export interface BlasNotFound {
  readonly found: false;
  readonly tried: readonly BlasDetectionAttempt[];
  readonly reasons: readonly string[];
  readonly possibleSolutions: readonly string[];
}

export type BlasDetection = BlasFound | BlasNotFound;

export declare const APT_INSTALL_LINE: string;
export declare function detectBlas(options?: { env?: NodeJS.ProcessEnv }): BlasDetection;
