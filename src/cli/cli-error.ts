// What ends the CLI: the failure, its exit code, and how much of the usage goes with it.

/** A failure that ends the CLI with `exitCode` after printing `message` (already safe to print). */
export class CliError extends Error {
  readonly exitCode: number;
  readonly usage: 'none' | 'hint' | 'full';

  constructor(message: string, exitCode: number, usage: 'none' | 'hint' | 'full' = 'none') {
    super(message);
    this.exitCode = exitCode;
    this.usage = usage;
  }
}

/** Exit 2; the whole usage text for a missing or unknown command, a pointer to it otherwise. */
export const usageError = (message: string, fullUsage = false) => new CliError(message, 2, fullUsage ? 'full' : 'hint');

/** Server text and user input go to a terminal: no control characters, no line breaks. */
export function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
}

/** A word the user typed, as an error message may quote it: one line, at most 40 characters. */
export const quoted = (word: string) => `'${oneLine(word).slice(0, 40)}'`;
