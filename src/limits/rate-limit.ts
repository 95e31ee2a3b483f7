/**
 * A rate limit as people write it (`600/60s`, `100/1m`, `5000/1h`) and as it is kept and compared.
 * One form is stored and shown: `<count>/<seconds>s`.
 */

export type RateLimit = Readonly<{ count: number; windowSeconds: number }>;

/** `off`: an organization's override exempting it from the default limit. */
export const NO_LIMIT = 'off';

export const MAX_COUNT = 1_000_000_000;
/** A day: windows are counted in the store, and a longer one would outlive any useful reset. */
export const MAX_WINDOW_SECONDS = 86_400;

const FORM = /^([1-9][0-9]{0,9})\/([1-9][0-9]{0,5})([smh])$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600 } as const;

/** `600/60s` → {count: 600, windowSeconds: 60}; undefined for anything else, or out of range. */
export function parseRateLimit(text: string): RateLimit | undefined {
  const match = FORM.exec(text);
  if (match === null) return undefined;
  const count = Number(match[1]);
  const windowSeconds = Number(match[2]) * UNIT_SECONDS[match[3] as keyof typeof UNIT_SECONDS];
  if (count > MAX_COUNT || windowSeconds > MAX_WINDOW_SECONDS) return undefined;
  return { count, windowSeconds };
}

export function formatRateLimit(limit: RateLimit): string {
  return `${limit.count}/${limit.windowSeconds}s`;
}

/** What the words mean, for a refusal's detail and the settings' documentation. */
export const RATE_LIMIT_FORM = '`<count>/<window>` with the window in s, m or h (e.g. `600/60s`), at most 1000000000 per 24h';

/**
 * Whether `a` admits no more than `b` over time: a lower or equal rate (count per second). A
 * key's own limit must not be above its organization's by this measure.
 */
export function notAbove(a: RateLimit, b: RateLimit): boolean {
  return a.count * b.windowSeconds <= b.count * a.windowSeconds;
}

/** The lower of two limits by rate; `a` on a tie. */
export function lowerOf(a: RateLimit, b: RateLimit): RateLimit {
  return notAbove(a, b) ? a : b;
}
