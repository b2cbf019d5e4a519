/** Where the `tenferro` command writes and what it reads: the process's streams and environment, or a test's. */
export interface CliIo {
  readonly stdout: Pick<NodeJS.WriteStream, 'write' | 'isTTY'>;
  readonly stderr: Pick<NodeJS.WriteStream, 'write' | 'isTTY'>;
  readonly env: NodeJS.ProcessEnv;
  /** The exit code so far; a command that reports and then fails sets it (usage errors and thrown failures are mapped by `run`). */
  exitCode: number;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, exitCode: 0 };
}
