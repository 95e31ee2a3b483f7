import { pino, type DestinationStream } from 'pino';

export type LogSink = DestinationStream & {
  /** Writes out every line handed in so far, before returning. */
  flushSync(): void;
  /** pino's logger.flush() calls this. */
  flush(callback?: (error?: Error) => void): void;
};

/**
 * The gateway's stdout, written once per event-loop turn.
 *
 * The access log is one line per request, and the gateway answers many requests in one turn of
 * the event loop. Here the lines of a turn are collected and leave together in one write as
 * soon as the turn ends (setImmediate), so a line is never held back longer than the turn that
 * made it, and no timer is involved.
 *
 * The write is synchronous (sonic-boom, pino's own destination, does it: partial writes and
 * EAGAIN are its job). A log reader that falls behind therefore slows the gateway down rather
 * than making it drop lines or buffer without bound; and the order of lines is the order they
 * were logged in, also on the way out of the process (main.ts flushes on exit).
 */
export function createLogSink(fd: number): LogSink {
  const out = pino.destination({ fd, sync: true });
  let pending: string[] = [];
  let scheduled = false;

  const writePending = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const batch = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    out.write(batch);
  };

  return {
    write(line: string) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(writePending);
      }
    },
    flushSync: writePending,
    flush(callback) {
      writePending();
      callback?.();
    },
  };
}
