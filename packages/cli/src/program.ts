import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import { DEFAULT_SIZES } from './bench/bench-plan.js';
import { parseSizes, parseThreads } from './bench/bench-options.js';
import type { CliIo } from './cli-io.js';
import type { BenchCommandOptions } from './commands/bench.js';
import { EXIT } from './exit-codes.js';

function cliVersion(): string {
  return String((createRequire(import.meta.url)('../package.json') as { version?: string }).version ?? '0.0.0');
}

/**
 * The `tenferro` program (commander). Help and the version go to stdout; usage errors to stderr
 * as `tenferro: <message>`, followed by a hint. Nothing exits the process: `run` maps outcomes to
 * exit codes. A command's module (and with it `@tenferro/core`) is imported when the command runs:
 * `--help`, `--version` and usage errors load commander and this file only.
 */
export function createProgram(io: CliIo): Command {
  const program = new Command('tenferro')
    .description('What tenferro (numeric CPU work for Node.js) sees on this machine, and how fast it runs here.')
    .version(cliVersion(), '-V, --version', 'print the version of @tenferro/cli')
    .helpOption('-h, --help', 'print help')
    .helpCommand('help [command]', 'print help for a command')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(s.replace(/^error: /, 'tenferro: ')),
    })
    .showHelpAfterError('(run tenferro --help for usage)')
    .showSuggestionAfterError();

  program
    .command('info')
    .description('what tenferro sees: affinity, online CPUs, capacity, NUMA nodes, providers, the default backend')
    .option('--json', 'print one JSON object (schema tenferro.info/2; with --census, tenferro.census/1)')
    .option('--census', 'list every thread of the process with its CPU mask and owner, after one GEMM per available kind, flagging threads outside their domain')
    .action(async (options: { json?: boolean; census?: boolean }) =>
      options.census === true ? (await import('./commands/census.js')).censusCommand(options, io) : (await import('./commands/info.js')).infoCommand(options, io),
    );

  program
    .command('bench')
    .description('matmul GFLOP/s per provider and size (f64, f32), beside C calling cblas directly and onnxruntime-node when present')
    .addOption(new Option('--kind <kind>', 'measure one tenferro kind only (default: both)').choices(['faer', 'blas']))
    .option('--sizes <list>', 'comma-separated matrix sizes n', parseSizes, [...DEFAULT_SIZES])
    .option('--threads <n>', 'threads for every provider (default: TENFERRO_NUM_THREADS, else the usable CPUs)', parseThreads)
    .option('--json', 'print one JSON object (schema tenferro.bench/1) instead of the table')
    .option('--svg <file>', 'also write an SVG chart of GFLOP/s against n')
    .action(async (options: BenchCommandOptions) => (await import('./commands/bench.js')).benchCommand(options, io));

  return program;
}

/**
 * Run the command line `argv` (without `node` and the script) and return the exit code: 0 done or
 * help/version, 1 a runtime failure (one line `tenferro: <message> [Code]` on stderr), 2 a usage
 * error (including no command at all: help on stderr).
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const program = createProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return io.exitCode;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    io.stderr.write(`${(await import('./describe-error.js')).describeError(e)}\n`);
    return EXIT.failure;
  }
}
