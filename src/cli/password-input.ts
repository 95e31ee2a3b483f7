import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/**
 * Reading a secret for the CLI without it ever touching argv, the shell history or the screen:
 * the first line of a piped stdin, or a prompt on the terminal with echo off.
 *
 * The prompt is node:readline's (muted output below). The first line of a pipe is read by hand
 * (readFirstLine), not by readline, which is unsuitable there (checked, issue 29): it has no bound
 * on a line's length (fed 16 MiB with no newline it held all of it, heap +18 MiB, and waited for
 * more; readFirstLine refuses past 64 KiB), and it keeps reading after the first line, where this
 * stops at the first LF and releases the pipe so that a writer holding it open cannot hold the CLI.
 */

/** Thrown when the user interrupts the prompt (Ctrl-C / Ctrl-D); the CLI exits 130. */
export class PromptInterrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'PromptInterrupted';
  }
}

/** The password could not be read as given (empty, mismatched, too long); the CLI exits 2. */
export class PasswordInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PasswordInputError';
  }
}

/**
 * The first line of `input` (up to the first LF, or the end of the stream), without its line
 * terminator (`\n` or `\r\n`). Stops reading at the first LF, so a writer that keeps the pipe
 * open does not hold the CLI up; `undefined` when the stream ends before any byte arrives.
 */
export function readFirstLine(input: NodeJS.ReadableStream & { destroy?: () => void }, maxBytes = 64 * 1024): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const finish = (error: Error | undefined, value?: string) => {
      if (settled) return;
      settled = true;
      input.removeListener('data', onData);
      input.removeListener('end', onEnd);
      input.removeListener('error', onError);
      input.pause();
      // Release the pipe so the process can exit even if the writer keeps it open.
      input.destroy?.();
      if (error !== undefined) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      const newline = buffer.indexOf(0x0a);
      if (newline === -1) {
        chunks.push(buffer);
        length += buffer.length;
        if (length > maxBytes) finish(new PasswordInputError(`the first line of stdin is longer than ${maxBytes} bytes`));
        return;
      }
      chunks.push(buffer.subarray(0, newline));
      finish(undefined, stripCarriageReturn(Buffer.concat(chunks).toString('utf8')));
    };
    const onEnd = () => {
      finish(undefined, length === 0 ? undefined : stripCarriageReturn(Buffer.concat(chunks).toString('utf8')));
    };
    const onError = (error: Error) => finish(error);
    input.on('data', onData);
    input.on('end', onEnd);
    input.on('error', onError);
    input.resume();
  });
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** A pass-through to `target` that drops everything while `muted`: readline's echo goes nowhere. */
class MutableOutput extends Writable {
  muted = false;
  private readonly target: NodeJS.WritableStream;

  constructor(target: NodeJS.WritableStream) {
    super();
    this.target = target;
  }
  // decodeStrings (the default) hands every chunk over as a Buffer.
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.muted) {
      callback();
      return;
    }
    this.target.write(chunk);
    // Done at once, never queued: a write buffered here could land after the mute and vanish.
    callback();
  }
}

export type PromptStreams = {
  /** The terminal to read keystrokes from (process.stdin). */
  input: NodeJS.ReadableStream;
  /** Where the prompt is shown (process.stderr, so that stdout stays machine-readable). */
  output: NodeJS.WritableStream;
};

/**
 * Asks for a line on the terminal with echo off: readline in terminal mode (raw input, so the
 * terminal itself echoes nothing) writing to an output that is muted once the prompt is shown.
 */
export function promptHidden(prompt: string, streams: PromptStreams): Promise<string> {
  const output = new MutableOutput(streams.output);
  const rl = createInterface({ input: streams.input, output, terminal: true, historySize: 0 });
  return new Promise<string>((resolve, reject) => {
    let answered = false;
    const interrupted = () => {
      if (answered) return;
      answered = true;
      output.muted = false;
      rl.close();
      streams.output.write('\n');
      reject(new PromptInterrupted());
    };
    rl.on('SIGINT', interrupted);
    // Ctrl-D on an empty line, or the input ending, closes the interface without an answer.
    rl.on('close', interrupted);
    rl.question(prompt, (answer) => {
      answered = true;
      output.muted = false;
      rl.close();
      // The Enter key was muted with the rest; end the prompt's line.
      streams.output.write('\n');
      resolve(answer);
    });
    // question() has written the prompt synchronously; from here on nothing is echoed.
    output.muted = true;
  });
}

/** A new password, typed twice on the terminal; throws when the two differ or it is empty. */
export async function promptNewPassword(streams: PromptStreams): Promise<string> {
  const first = await promptHidden('Password: ', streams);
  if (first.length === 0) throw new PasswordInputError('the password is empty');
  const second = await promptHidden('Repeat password: ', streams);
  if (first !== second) throw new PasswordInputError('the passwords do not match');
  return first;
}
