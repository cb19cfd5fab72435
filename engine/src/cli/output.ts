// Terminal output for the CLI: colours only on a terminal (NO_COLOR respected), a one-line progress
// display that rewrites itself on a terminal and prints plain lines otherwise, and yes/no questions.

const useColor = (stream: NodeJS.WriteStream) => stream.isTTY === true && !process.env.NO_COLOR;
const paint = (code: number) => (s: string) => (useColor(process.stdout) ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint(1);
export const dim = paint(2);
export const green = paint(32);
export const yellow = paint(33);
export const red = paint(31);
export const cyan = paint(36);

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
