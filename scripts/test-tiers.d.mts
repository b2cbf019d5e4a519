// Types of scripts/test-tiers.mjs, for the tests that import it (#39).
export declare const TIERS: readonly string[];
export declare const TIER_MEANING: Readonly<Record<string, string>>;
export declare const DEFAULT_TIER: Readonly<Record<string, string>>;
export declare const LISTED: Readonly<Record<string, Readonly<Record<string, string>>>>;
export declare function tierOf(pkg: string, file: string): string;
export declare function testFiles(pkgDir: string): string[];
export declare function filesInTier(pkg: string, pkgDir: string, tier: string): string[];
