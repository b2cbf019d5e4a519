// The ABI of tenferro_os.node (#40): the one table that src/binding.ts (TypeScript) and the addon
// (through the generated abi.generated.h, included by arbiter.h) share. After editing it,
// regenerate the header and the declaration:
//   node node_modules/@tenferro/native/abi/generate.mjs native/src/abi.mjs
// (test/abi.test.ts fails while they are stale; the addon exports the table's hash as abiHash).
export const ABI = {
  namespace: 'os::arbiter',
  constants: {
    // What arbiterAcquire / arbiterRelease / arbiterCancel answer (bit flags): the permit is held
    // now (else it was queued); with Admitted, the owner already held one; this client has
    // admitted waiters to collect (take_grants); cancel(): the waiter was still queued and is
    // gone; Invalid: a malformed request (never admitted, nothing changed).
    Admitted: 1,
    Reentrant: 2,
    GrantsPending: 4,
    Removed: 8,
    Invalid: -1,
  },
};
