import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shouldColor } from '../src/index.js';
import { bin, hasAnsi } from './spawn-cli.js';

describe('shouldColor', () => {
  const tty = { isTTY: true, env: { TERM: 'xterm-256color' }, json: false };
  it('colours on a terminal only', () => {
    expect(shouldColor(tty)).toBe(true);
    expect(shouldColor({ ...tty, isTTY: false })).toBe(false);
    expect(shouldColor({ ...tty, isTTY: undefined })).toBe(false);
  });
  it('never with NO_COLOR (any non-empty value), never for --json, never on TERM=dumb', () => {
    expect(shouldColor({ ...tty, env: { NO_COLOR: '1' } })).toBe(false);
    expect(shouldColor({ ...tty, env: { NO_COLOR: 'yes' } })).toBe(false);
    expect(shouldColor({ ...tty, env: { NO_COLOR: '' } })).toBe(true);
    expect(shouldColor({ ...tty, json: true })).toBe(false);
    expect(shouldColor({ ...tty, env: { TERM: 'dumb' } })).toBe(false);
  });
});

/** Run the bin with a pseudo-terminal as stdin/stdout/stderr (util-linux `script`). */
function onTerminal(args: string, env: Record<string, string | undefined>) {
  const r = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} ${args}`, '/dev/null'], {
    encoding: 'utf8',
    env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: undefined, ...env },
  });
  return { code: r.status, out: r.stdout };
}

const haveScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

describe.skipIf(!haveScript)('on a terminal (script(1) gives the command a pty)', () => {
  it('info is coloured', () => {
    const r = onTerminal('info', {});
    expect(r.code).toBe(0);
    expect(hasAnsi(r.out)).toBe(true);
  });
  it('NO_COLOR=1 turns colour off', () => {
    const r = onTerminal('info', { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('process affinity');
    expect(hasAnsi(r.out)).toBe(false);
  });
  it('--json is never coloured', () => {
    const r = onTerminal('info --json', {});
    expect(r.code).toBe(0);
    expect(hasAnsi(r.out)).toBe(false);
    expect(JSON.parse(r.out).schema).toBe('tenferro.info/2');
  });
});
