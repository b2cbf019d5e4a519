/** The `tenferro` command's exit codes (commander's conventions; documented in docs/cli.md). */
export const EXIT = Object.freeze({
  /** Done, or help/version asked for. */
  ok: 0,
  /** A runtime failure, including a setting of the user's that tenferro rejects (`InvalidArgument`, e.g. `TENFERRO_NUM_THREADS=abc`). */
  failure: 1,
  /** A usage error: unknown command or option, a bad option value, or no command at all. */
  usage: 2,
});
