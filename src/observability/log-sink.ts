import { pino, type DestinationStream } from 'pino';

/** The batch being gathered: its bytes so far are `buf[0, pos)`. */
export type LineBatch = { readonly buf: Buffer; pos: number };

export type LogSink = DestinationStream & {
  /** Writes out every line handed in so far, before returning. */
  flushSync(): void;
  /** pino's logger.flush() calls this. */
  flush(callback?: (error?: Error) => void): void;
  /**
   * Room for one line of at most `bytes` bytes at the end of the current batch, for a writer that
   * renders its line as bytes itself (the access line, access-log.ts): the batch, whose `pos` the
   * writer advances past what it wrote, synchronously, before anything else is logged. Undefined
   * when no batch holds that many: the writer hands a string to write() instead.
   */
  room?(bytes: number): LineBatch | undefined;
};

/**
 * The gateway's stdout, written in batches of at most BATCH_WINDOW_MS.
 *
 * The access log is one line per request. One write per line, or even per event-loop turn (the
 * first version: a busy gateway answers a request or two per turn), made the write syscall the
 * largest single cost of the log: on the authorization port behind nginx the sink's writes were
 * ~3 % of the port's busy time (docs/performance.md, issue 30's third step). Here the lines
 * gather for at most BATCH_WINDOW_MS (or until BATCH_BYTES) and leave together in one write.
 * pino's own buffered destination (`minLength`) holds lines until 4 KiB gather, with no bound in
 * time; this bound is 10 ms.
 *
 * The lines gather as bytes in one buffer, each encoded as it comes (a string as UTF-8; the
 * access line renders its bytes there itself, room()), and the batch is written as those bytes:
 * no array of strings joined into one string and encoded again per batch (issue 30's fifth step,
 * docs/performance.md: the join and the string write were ~4 % of the authorization port's busy
 * time).
 *
 * What that costs: a line reaches stdout up to 10 ms after it was logged, and a process killed
 * outright (SIGKILL, the kernel's OOM killer) loses at most the last 10 ms of lines. An orderly
 * exit (main.ts flushes on 'exit', also after an uncaught exception) loses nothing.
 *
 * The write is synchronous (sonic-boom, pino's own destination, does it: partial writes and
 * EAGAIN are its job). A log reader that falls behind therefore slows the gateway down rather
 * than making it drop lines or buffer without bound; and the order of lines is the order they
 * were logged in, also on the way out of the process.
 */
/** The longest a line waits for its batch. */
export const BATCH_WINDOW_MS = 10;
/** A batch this large leaves at once, without waiting for its window to end; no batch is larger. */
const BATCH_BYTES = 64 * 1024;

export function createLogSink(fd: number, options: { windowMs?: number } = {}): LogSink {
  const windowMs = options.windowMs ?? BATCH_WINDOW_MS;
  // sonic-boom in its Buffer mode (its types know only the string mode's write).
  const out = pino.destination({ fd, sync: true, contentMode: 'buffer' }) as unknown as { write(bytes: Buffer): boolean; on(event: 'error', listener: () => void): unknown };
  /**
   * sonic-boom keeps a view of a batch it could not write out (an error other than EAGAIN, which
   * it retries) and writes it with the next one: that batch's buffer is then left to it, and the
   * next batch gathers in a new one.
   */
  let kept = false;
  out.on('error', () => (kept = true));
  const batch: LineBatch = { buf: Buffer.allocUnsafe(BATCH_BYTES), pos: 0 };
  let window: NodeJS.Timeout | undefined;

  const writePending = () => {
    if (window !== undefined) {
      clearTimeout(window);
      window = undefined;
    }
    if (batch.pos === 0) return;
    const bytes = batch.buf.subarray(0, batch.pos);
    batch.pos = 0;
    kept = false;
    out.write(bytes);
    if (kept) (batch as { buf: Buffer }).buf = Buffer.allocUnsafe(BATCH_BYTES);
  };

  /** A line of `bytes` is coming: its window opened, the batch written first when the line would not fit. */
  const make = (bytes: number): void => {
    if (batch.pos + bytes > BATCH_BYTES) writePending();
    // Kept referenced: a process that would otherwise end waits the window out, its lines written.
    if (window === undefined) window = setTimeout(writePending, windowMs);
  };

  return {
    write(line: string) {
      // At most 3 bytes per UTF-16 unit: the exact length is counted only when that bound does not fit.
      let bytes = line.length * 3;
      if (batch.pos + bytes > BATCH_BYTES) bytes = Buffer.byteLength(line);
      if (bytes > BATCH_BYTES) {
        // Larger than any batch: after the lines before it, on its own.
        writePending();
        out.write(Buffer.from(line));
        return;
      }
      make(bytes);
      batch.pos += batch.buf.write(line, batch.pos);
      if (batch.pos >= BATCH_BYTES) writePending();
    },
    room(bytes) {
      if (bytes > BATCH_BYTES) return undefined;
      make(bytes);
      return batch;
    },
    flushSync: writePending,
    flush(callback) {
      writePending();
      callback?.();
    },
  };
}
