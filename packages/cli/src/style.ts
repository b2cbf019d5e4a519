/** Text styles for human output: ANSI colours, or the identity when colour is off. */
export interface Style {
  readonly enabled: boolean;
  readonly bold: (s: string) => string;
  readonly dim: (s: string) => string;
  readonly green: (s: string) => string;
  readonly yellow: (s: string) => string;
  readonly red: (s: string) => string;
}

export interface ColorContext {
  /** Whether the stream written to is a terminal. */
  readonly isTTY: boolean | undefined;
  readonly env: NodeJS.ProcessEnv;
  /** Machine-readable output is never coloured. */
  readonly json: boolean;
}

/**
 * Colour only on a terminal, never for `--json`, never when `NO_COLOR` is set to anything but the
 * empty string (no-color.org), and never on a `TERM=dumb` terminal.
 */
export function shouldColor({ isTTY, env, json }: ColorContext): boolean {
  if (json || isTTY !== true) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}

const sgr = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;
const plain = (s: string) => s;

export function makeStyle(enabled: boolean): Style {
  if (!enabled) return { enabled, bold: plain, dim: plain, green: plain, yellow: plain, red: plain };
  return { enabled, bold: sgr(1, 22), dim: sgr(2, 22), green: sgr(32, 39), yellow: sgr(33, 39), red: sgr(31, 39) };
}

/** The style for writing to `stream` (a TTY check plus the environment). */
export function styleFor(stream: { readonly isTTY?: boolean }, json: boolean, env: NodeJS.ProcessEnv = process.env): Style {
  return makeStyle(shouldColor({ isTTY: stream.isTTY, env, json }));
}
