// A stream's text cut into lines as it comes, in time proportional to its size. A line with no end yet is kept in
// pieces (joining it to each new chunk and splitting again cost the square of its length: 14 s of a blocked event
// loop for a 20 MB line in 64 KB reads), and one longer than `maxChars` keeps its start and says what was left out,
// so that a worker printing megabytes without a newline (a progress bar's \r, a huge error message) costs what its
// bytes cost, and the log stays readable.
export class LineSplitter {
  private pieces: string[] = [];
  private length = 0;
  private dropped = 0;

  constructor(
    private readonly each: (line: string) => void,
    private readonly maxChars: number,
  ) {}

  /** The next chunk of the stream: each line it ends goes to `each`. */
  push(text: string): void {
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      this.add(text, from, nl);
      this.emit();
      from = nl + 1;
    }
    if (from < text.length) this.add(text, from, text.length);
  }

  /** The stream ended: its last line, when it has no newline (a crash's message), goes to `each`. */
  flush(): void {
    if (this.length || this.dropped) this.emit();
  }

  private add(text: string, from: number, to: number): void {
    const room = Math.max(0, this.maxChars - this.length);
    const take = Math.min(room, to - from);
    if (take > 0) {
      this.pieces.push(from === 0 && to === text.length && take === text.length ? text : text.slice(from, from + take));
      this.length += take;
    }
    this.dropped += to - from - take;
  }

  private emit(): void {
    let line = this.pieces.length === 1 ? this.pieces[0] : this.pieces.join('');
    if (this.dropped) line += ` [... ${this.dropped} more characters of this line left out]`;
    this.pieces = [];
    this.length = 0;
    this.dropped = 0;
    this.each(line);
  }
}
