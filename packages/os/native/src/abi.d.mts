// Generated from abi.mjs by @tenferro/native/abi/generate.mjs — do not edit; edit the table and rerun it.
export declare const ABI: {
  readonly namespace: "os::arbiter";
  readonly constants: {
    readonly Admitted: 1;
    readonly Reentrant: 2;
    readonly GrantsPending: 4;
    readonly Removed: 8;
    readonly Invalid: -1;
  };
};
