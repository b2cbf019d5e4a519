import { Presets, SingleBar } from 'cli-progress';

/** Progress over a known number of cases: a cli-progress bar on a terminal, nothing otherwise. */
export interface Progress {
  /** Called before each case with what it measures. */
  step(label: string): void;
  stop(): void;
}

export function createProgress(total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (stream.isTTY !== true || total === 0) return { step: () => {}, stop: () => {} };
  const bar = new SingleBar(
    { format: 'bench [{bar}] {value}/{total}  {case}', stream, hideCursor: true, clearOnComplete: true, barsize: 28, etaBuffer: 4 },
    Presets.shades_classic,
  );
  let done = -1;
  bar.start(total, 0, { case: 'starting' });
  return {
    step(label) {
      done++;
      bar.update(Math.min(done, total), { case: label });
    },
    stop() {
      bar.update(total, { case: 'done' });
      bar.stop();
    },
  };
}
