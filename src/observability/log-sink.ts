import { pino, type DestinationStream } from 'pino';

export type LogSink = DestinationStream & {
  /** Writes out every line handed in so far, before returning. */
  flushSync(): void;
  /** pino's logger.flush() calls this. */
  flush(callback?: (error?: Error) => void): void;
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
/** A batch this large leaves at once, without waiting for its window to end. */
const BATCH_BYTES = 64 * 1024;

export function createLogSink(fd: number, options: { windowMs?: number } = {}): LogSink {
  const windowMs = options.windowMs ?? BATCH_WINDOW_MS;
  const out = pino.destination({ fd, sync: true });
  let pending: string[] = [];
  let pendingLength = 0;
  let window: NodeJS.Timeout | undefined;

  const writePending = () => {
    if (window !== undefined) {
      clearTimeout(window);
      window = undefined;
    }
    if (pending.length === 0) return;
    const batch = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    pendingLength = 0;
    out.write(batch);
  };

  return {
    write(line: string) {
      pending.push(line);
      pendingLength += line.length;
      if (pendingLength >= BATCH_BYTES) writePending();
      // Kept referenced: a process that would otherwise end waits the window out, its lines written.
      else if (window === undefined) window = setTimeout(writePending, windowMs);
    },
    flushSync: writePending,
    flush(callback) {
      writePending();
      callback?.();
    },
  };
}
