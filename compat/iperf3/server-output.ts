/**
 * One server test's text: kept whole for --get-server-output and the test's end block, and printed as it comes while
 * the test holds the server's output (3.12 serves one test at a time and prints live; tests running beside it print
 * their block when they end, so blocks never interleave). With -J the text is only kept.
 */
export class TestText {
  private text = "";
  /** How much of `text` is already printed. */
  private printed = 0;

  constructor(
    private readonly json: boolean,
    /** Whether this test may print now (the first test to speak holds the output until it ends). */
    private readonly holdsOutput: () => boolean,
    private readonly print: (text: string) => void,
  ) {}

  say(text: string): void {
    this.text += text;
    if (this.json || !this.holdsOutput()) return;
    this.print(this.text.slice(this.printed));
    this.printed = this.text.length;
  }

  /** Everything said so far (--get-server-output). */
  get all(): string {
    return this.text;
  }

  /** What is not printed yet: the rest of the test's block, printed when it ends. */
  get unprinted(): string {
    return this.text.slice(this.printed);
  }
}
