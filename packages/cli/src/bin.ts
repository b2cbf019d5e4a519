#!/usr/bin/env node
import { processIo } from './cli-io.js';
import { run } from './program.js';

run(process.argv.slice(2), processIo()).then((code) => {
  process.exitCode = code;
});
