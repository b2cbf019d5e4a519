// The ABI table (native/src/abi.mjs, #40): the committed header and declaration are what the
// generator makes of it, its hash is the one the header carries, and the built addon carries
// (the suite: @tenferro/native-build/abi-suite).
import { describeAbiTable } from '@tenferro/native-build/abi-suite';
import * as generator from '@tenferro/native/abi';
import { abiHash } from '@tenferro/core';
import { ABI } from '../native/src/abi.mjs';
import { loadBlas } from '../src/native/load.js';

describeAbiTable({ nativeDir: new URL('../native/', import.meta.url), abi: ABI, load: loadBlas, abiHash, generator });
