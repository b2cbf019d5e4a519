// Runnable examples in the documentation: ```js run blocks and the ```output block after each.

export interface Example {
  readonly file: string;
  readonly line: number;
  readonly code: string;
  readonly output: string | undefined;
}

/** ```js run blocks and the ```output block that follows each (blank lines and prose allowed before it, another fence not). */
export function examplesOf(file: string, text: string): Example[] {
  const out: Example[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  const blocks = [...text.matchAll(fence)].map((m) => ({ info: m[1]!.trim(), body: m[2]!, at: m.index! }));
  blocks.forEach((b, i) => {
    if (b.info !== 'js run') return;
    const next = blocks[i + 1];
    out.push({ file, line: text.slice(0, b.at).split('\n').length, code: b.body, output: next?.info === 'output' ? next.body : undefined });
  });
  return out;
}

