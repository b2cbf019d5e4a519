// Terminating a worker while it is inside a binding call must not abort the process (close()
// terminates engine workers; a kernel's first call loads the addon and reads info()). Without
// NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS, node-addon-api turns the N-API failure during
// termination into "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw" (found in
// provider-faer's abort tests; the same code path is in this addon's info()).
import { fileURLToPath } from 'node:url';
import { spawnTerminationProbe } from '@tenferro/native-build/fuzz';
import { describe, expect, it } from 'vitest';

const ADDON = fileURLToPath(new URL('../native/build/Release/tenferro_blas.node', import.meta.url));

describe('worker termination during a binding call', () => {
  it('info() in a loop, terminated 20 times: the process lives', () => {
    const r = spawnTerminationProbe({ addon: ADDON, fn: 'info' });
    expect(r.stderr).not.toContain('FATAL ERROR');
    expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim() }).toEqual({ status: 0, signal: null, stdout: 'ok' });
  });
});
