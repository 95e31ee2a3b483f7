/**
 * Development logs for a person at a terminal: each JSON line turned into a readable one
 * (time, level name, message, then the fields) by pino-pretty, pino's own pretty printer.
 *
 * Only where someone reads them: development mode (NODE_ENV is not production) and stdout a
 * terminal. Production, and any output piped to a program (a log shipper, the tests that parse
 * the lines), stays one JSON object per line. pino-pretty is a devDependency: where it is not
 * installed (the production image) the logs stay JSON, whatever the mode.
 */
import { pino } from 'pino';
import type { LogSink } from './log-sink.js';

export function wantsPrettyLogs(production: boolean, stdout: { isTTY?: boolean }): boolean {
  return !production && stdout.isTTY === true;
}

/** A sink that writes each line prettified to `fd`, synchronously; undefined without pino-pretty. */
export async function createPrettySink(fd: number): Promise<LogSink | undefined> {
  let prettyFactory: (options: Record<string, unknown>) => (line: string) => string;
  try {
    ({ prettyFactory } = (await import('pino-pretty')) as unknown as { prettyFactory: typeof prettyFactory });
  } catch {
    return undefined;
  }
  const format = prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
  const out = pino.destination({ fd, sync: true });
  return {
    write(line: string) {
      out.write(format(line));
    },
    flushSync() {},
    flush(callback) {
      callback?.();
    },
  };
}
