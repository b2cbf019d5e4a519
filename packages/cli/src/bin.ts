#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { collectInfo, describeError, formatInfo } from './commands/info.js';

const USAGE = `usage: tenferro <command> [options]

commands:
  info [--json]      what tenferro sees: affinity, online CPUs, capacity, NUMA nodes, providers
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'info': {
      const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, strict: true });
      const report = await collectInfo();
      process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatInfo(report)}\n`);
      return 0;
    }
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`tenferro: unknown command ${JSON.stringify(command)}\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${describeError(error)}\n`);
    process.exitCode = 1;
  },
);
