// Terminating a worker while it is inside a binding call must not abort the process (close()
// terminates engine workers). The addon is built with NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnTerminationProbe } from '@tenferro/native-build/fuzz';
import { describe, expect, it } from 'vitest';

const ADDON = fileURLToPath(new URL('../native/build/Release/tenferro_tprims.node', import.meta.url));

describe.runIf(existsSync(ADDON))('worker termination during a binding call', () => {
  it('info() in a loop, terminated 20 times: the process lives', () => {
    const r = spawnTerminationProbe({ addon: ADDON, fn: 'info' });
    expect(r.stderr).not.toContain('FATAL ERROR');
    expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim() }).toEqual({ status: 0, signal: null, stdout: 'ok' });
  });
});
