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

/** ISO 8601 time of now, made at most once per millisecond: every log line asks for it. */
export function isoTimeNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
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
