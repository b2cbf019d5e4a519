// Terminating a worker while it is inside a binding call must not abort the process: N-API calls
// fail while an environment terminates, and node-addon-api (with C++ exceptions off) used to turn
// that failure into "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw". The addon is
// built with NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS. (Core terminates engine workers on close().)
import { fileURLToPath } from 'node:url';
import { spawnTerminationProbe } from '@tenferro/native-build/fuzz';
import { describe, expect, it } from 'vitest';

const ADDON = fileURLToPath(new URL('../native/build/Release/tenferro_os.node', import.meta.url));

describe('worker termination during a binding call', () => {
  for (const [fn, args] of [
    ['getThreadAffinity', []],
    ['getProcessAffinity', []],
    ['typedArrayRange', [new Uint8Array(8)]],
  ] as const) {
    it(`${fn}() in a loop, terminated 20 times: the process lives`, () => {
      const r = spawnTerminationProbe({ addon: ADDON, fn, args: [...args] });
      expect(r.stderr).not.toContain('FATAL ERROR');
      expect({ status: r.status, signal: r.signal, stdout: r.stdout.trim() }).toEqual({ status: 0, signal: null, stdout: 'ok' });
    });
  }
});
