// Terminal output for the CLI: colours only on a terminal (NO_COLOR respected), a one-line progress
// display that rewrites itself on a terminal and prints plain lines otherwise, and yes/no questions.

/** Whether a stream shows colours: a terminal, unless NO_COLOR is set. */
export const showsColor = (stream: NodeJS.WriteStream) => stream.isTTY === true && !process.env.NO_COLOR;
// Text is painted when either stream shows colours; a stream that does not gets it plain (plainUnlessColor), so that
// `strato keys create 2>file` writes no escape codes to the file while the terminal keeps them.
const paint = (code: number) => (s: string) => (showsColor(process.stdout) || showsColor(process.stderr) ? `\x1b[${code}m${s}\x1b[0m` : s);

/** Strips colour codes from what is written to `stream` when it does not show them (a file, a pipe, NO_COLOR). */
export function plainUnlessColor(stream: NodeJS.WriteStream): void {
  if (showsColor(stream)) return;
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  // eslint-disable-next-line no-control-regex
  const sgr = /\x1b\[[0-9;]*m/g;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => write(typeof chunk === 'string' ? chunk.replace(sgr, '') : chunk, ...rest)) as typeof stream.write;
}
export const bold = paint(1);
export const dim = paint(2);
export const green = paint(32);
export const yellow = paint(33);
export const red = paint(31);
export const cyan = paint(36);

/** A time for people: `2025-01-31 14:05:09`, in local time. */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Columns padded to their widest cell (colour codes do not count); the last column is not padded. */
export function printTable(header: string[], rows: string[][]): void {
  // eslint-disable-next-line no-control-regex
  const visible = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').length;
  const widths = header.map((h, i) => Math.max(visible(h), ...rows.map((r) => visible(r[i]))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - visible(c))))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${bold(line(header))}\n${rows.map((r) => line(r) + '\n').join('')}`);
}

export class Progress {
  private last = '';
  private readonly tty = process.stderr.isTTY === true;
  update(message: string): void {
    if (this.tty) {
      const line = message.length > 100 ? message.slice(0, 97) + '...' : message;
      process.stderr.write(`\r\x1b[2K${dim('… ' + line)}`);
      this.last = line;
    } else if (message !== this.last) {
      process.stderr.write(`  ${message}\n`);
      this.last = message;
    }
  }
  done(): void {
    if (this.tty && this.last) process.stderr.write('\r\x1b[2K');
    this.last = '';
  }
}

/** Asks a yes/no question on the terminal; without a terminal the answer is the default. */
export async function confirm(question: string, defaultYes = false): Promise<boolean> {
  if (!process.stdin.isTTY) return defaultYes;
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(`${question} ${defaultYes ? '[Y/n]' : '[y/N]'} `)).trim().toLowerCase();
    if (!answer) return defaultYes;
    return answer === 'y' || answer === 'yes';
  } finally {
    rl.close();
  }
}
