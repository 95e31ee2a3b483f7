import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * One logger per gateway. Serializers pick only what is safe; the redact paths are the net
 * under them, compiled once when the logger is built (explicit paths cost next to nothing).
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  'headers.cookie',
  '*.password',
  '*.token',
  '*.apiKey',
  'password',
  'token',
  'apiKey',
];

export type { Logger };

let lastMs = 0;
let lastIso = '';
let secondStart = -1;
let secondPrefix = '';
const MILLIS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);

/**
 * ISO 8601 time of now (`2026-11-23T09:33:24.123Z`), as pino's isoTime writes it. Every log
 * line asks for it, and Date#toISOString costs about a microsecond: the text up to the second
 * is made once a second and the milliseconds come from a table.
 */
export function isoTimeNow(): string {
  const ms = Date.now();
  if (ms === lastMs) return lastIso;
  lastMs = ms;
  const second = ms - (ms % 1000);
  if (second !== secondStart) {
    secondStart = second;
    secondPrefix = new Date(second).toISOString().slice(0, 20); // through the '.'
  }
  return (lastIso = secondPrefix + MILLIS[ms - second]!);
}

export function createLogger(level: string, destination: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'authgate' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: () => `,"time":"${isoTimeNow()}"`,
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}
