// Types of scripts/demo-steps.mjs, for the test that imports it (#39).
import type { Writable } from 'node:stream';

export interface StepResult {
  readonly ok: boolean;
  readonly name: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}
export interface StepOptions {
  readonly capture?: boolean;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly stderr?: Pick<Writable, 'write'>;
  readonly stdout?: Pick<Writable, 'write'>;
  readonly report?: (line: string) => void;
  readonly exit?: (code: number) => void;
}
export declare function runStep(name: string, cmd: string, args: readonly string[], opts?: StepOptions): Promise<StepResult>;
export declare function failureReport(result: StepResult): string[];
export declare function failureExitCode(result: StepResult): number;
export declare function mustRun(name: string, cmd: string, args: readonly string[], opts?: StepOptions): Promise<StepResult>;
