import { pino, type DestinationStream } from 'pino';

export type LogSink = DestinationStream & {
  /** Writes out every line handed in so far, before returning. */
  flushSync(): void;
  /** pino's logger.flush() calls this. */
  flush(callback?: (error?: Error) => void): void;
};

export type LogSinkOptions = {
  /** Where the lines go: 1 (stdout) in production. */
  fd: number;
  /** Write each turn's batch with a synchronous write (true) or through libuv's thread pool. */
  sync: boolean;
};

/**
 * The gateway's stdout, written once per event-loop turn.
 *
 * The access log is one line per request, and the gateway answers many requests in one turn of
 * the event loop. Handed to stdout one at a time, each line was a write of its own (through
 * libuv's thread pool: a thread hand-off and a wake-up per line on the gateway's own core), and
 * that cost more than all of authgate's own work on a request (docs/performance.md). Here the
 * lines of a turn are collected and leave together in one write as soon as the turn ends
 * (setImmediate), so a line is never held back longer than the turn that made it, and nothing
 * waits for a timer. sonic-boom (pino's own destination) does the writing: partial writes,
 * EAGAIN and flush-on-exit are its job.
 */
export function createLogSink(options: LogSinkOptions): LogSink {
  const out = pino.destination({ fd: options.fd, sync: options.sync });
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
    flushSync() {
      writePending();
      // An asynchronous sonic-boom may still hold a write in flight; flushSync writes what is left.
      if (!options.sync) {
        try {
          out.flushSync();
        } catch {
          // Nothing pending (sonic-boom throws while not yet open): nothing to flush.
        }
      }
    },
    flush(callback) {
      writePending();
      out.flush(callback);
    },
  };
}
