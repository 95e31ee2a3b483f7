/**
 * What the Redis modules share: the logger they write to, how an error is described without
 * what ioredis attaches to it, and the one way a Redis call is bounded in time.
 */

/** The part of a logger the Redis store and bus use (pino's Logger fits). */
export type Logger = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

/** Name and message only: an ioredis error carries the command's arguments (password hashes). */
export function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Settles as work() does, or after ms with what onTimeout() returns (or throws). One promise and
 * one timer: a cold credential lookup runs this on every request. A work() that throws before its
 * first await is a rejection like any other. mapError, when given, turns every rejection (work's
 * or onTimeout's) into what the caller sees.
 */
export function withDeadline<T>(
  work: () => Promise<T>,
  ms: number,
  onTimeout: () => T,
  mapError?: (error: unknown) => unknown,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = (error: unknown) => {
      clearTimeout(timer);
      reject(mapError === undefined ? error : mapError(error));
    };
    const timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        fail(error);
      }
    }, ms);
    let pending: Promise<T>;
    try {
      pending = work();
    } catch (error) {
      fail(error);
      return;
    }
    pending.then((value) => {
      clearTimeout(timer);
      resolve(value);
    }, fail);
  });
}
