// The seed of a fuzz run that varies per commit (#39): derived from the commit being tested, so each
// commit explores new cases beside the fixed corpus, and printed so a failure can be replayed with
// TENFERRO_FUZZ_SEED=<seed> (decimal or 0x-hex). Read from the files of .git (no child process).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface FuzzSeed {
  /** A 32-bit seed for fast-check. */
  readonly seed: number;
  /** Where it came from: the environment, a commit hash, or the fallback. */
  readonly source: string;
}

/** The commit of HEAD of the repository holding `from`, read from .git; undefined when there is none. */
export function headCommit(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    if (existsSync(dotGit)) {
      try {
        let gitDir = dotGit;
        if (statSync(dotGit).isFile()) gitDir = resolve(dir, /^gitdir:\s*(.*)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim() ?? '');
        const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
        if (/^[0-9a-f]{40,64}$/.test(head)) return head;
        const ref = /^ref:\s*(.*)$/.exec(head)?.[1];
        if (ref === undefined) return undefined;
        // A worktree keeps its refs in the common directory.
        const common = existsSync(join(gitDir, 'commondir')) ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
        for (const base of [gitDir, common]) {
          if (existsSync(join(base, ref))) return readFileSync(join(base, ref), 'utf8').trim();
        }
        const packed = join(common, 'packed-refs');
        if (existsSync(packed)) return new RegExp(`^([0-9a-f]{40,64}) ${ref.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm').exec(readFileSync(packed, 'utf8'))?.[1];
      } catch {
        return undefined;
      }
      return undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * TENFERRO_FUZZ_SEED when set; else the first 32 bits of the commit (HEAD, or GITHUB_SHA /
 * CI_COMMIT_SHA in CI); else `fallback`. Prints the seed and how to replay it.
 */
export function fuzzSeed(name: string, fallback: number): FuzzSeed {
  const env = process.env.TENFERRO_FUZZ_SEED;
  let result: FuzzSeed;
  if (env !== undefined && env.trim() !== '') {
    const seed = Number(env.trim());
    if (!Number.isSafeInteger(seed)) throw new Error(`TENFERRO_FUZZ_SEED must be an integer, got ${JSON.stringify(env)}`);
    result = { seed: seed | 0, source: 'TENFERRO_FUZZ_SEED' };
  } else {
    const commit = headCommit() ?? process.env.GITHUB_SHA ?? process.env.CI_COMMIT_SHA;
    result = commit !== undefined && /^[0-9a-f]{8}/i.test(commit)
      ? { seed: Number.parseInt(commit.slice(0, 8), 16) | 0, source: `commit ${commit.slice(0, 12)}` }
      : { seed: fallback | 0, source: 'fallback (no commit found)' };
  }
  console.info(`[fuzz] ${name}: seed ${result.seed} (${result.source}); replay with TENFERRO_FUZZ_SEED=${result.seed}`);
  return result;
}
