/**
 * The authorization port's speed tricks, and the one place that turns each off:
 * AUTHGATE_AUTHZ_SPEED_TRICKS_OFF (config/settings.ts), a comma-separated list of the names
 * below, or `all`. Read once at start into a frozen SpeedTricks the gateway hands to the decider
 * (decider-outcomes.ts) and the port (http-server.ts); nothing reads it per request but a boolean.
 *
 * Each trick answers exactly what the plain path answers, byte for byte but the Date value:
 * test/edge-authz/speed-tricks.test.ts sends the same requests to a port with every trick on and
 * one with every trick off and compares the answers, and speed-tricks-off.test.ts runs the port's
 * header-for-header tests again with every trick off. Turn one off to find out whether a fault is
 * the trick's, or to measure what it buys (`npm run bench -- --env AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=…`);
 * the figures below are docs/performance.md's ("What each optimisation bought", issue 30), CPU per
 * decision on the port, new ÷ before.
 *
 * - `kept-allows` (kept-allows.ts): a credential's allow is the same object while the route
 *   table, its route, its plan and its identity assertion are the same, so its answer and header
 *   bytes are made once. Bought ×0.79 (API key) and ×0.75 (JWT) with `header-blocks`.
 *   Off: every decision makes its allow anew (and so no answer is found kept either).
 * - `header-blocks` (answers.ts, answer-heads.ts): a kept allow's answer object per protocol and
 *   its header block rendered once, written as one Buffer per second of Date. Part of the ×0.79 /
 *   ×0.75 above; the one Buffer: 0.953 (issue 30's fourth step). Off: every answer's headers
 *   copied, checked and rendered as a string for each request, as for a refusal.
 * - `fast-front` (fast-front.ts): a strictly simple HTTP/1.1 head answered without node's
 *   IncomingMessage/ServerResponse. Bought ×0.84–0.87 (the port alone), and its fourth and fifth
 *   steps 0.913 and 0.912–0.926 more. Off: every connection goes to node's http.Server, as with
 *   tracing on.
 */

/** The names AUTHGATE_AUTHZ_SPEED_TRICKS_OFF takes (and `all`). */
export const SPEED_TRICK_NAMES = ['kept-allows', 'header-blocks', 'fast-front'] as const;
export type SpeedTrickName = (typeof SPEED_TRICK_NAMES)[number];

/** Which tricks are on: true unless the setting names them. */
export type SpeedTricks = Readonly<{ keptAllows: boolean; headerBlocks: boolean; fastFront: boolean }>;

/** Every trick on: the default. */
export const ALL_SPEED_TRICKS: SpeedTricks = Object.freeze({ keptAllows: true, headerBlocks: true, fastFront: true });

/** The tricks with those named turned off (`all`: every one), or the names not known. */
export function speedTricksWithout(off: readonly string[]): { ok: true; tricks: SpeedTricks } | { ok: false; unknown: readonly string[] } {
  const known: readonly string[] = SPEED_TRICK_NAMES;
  const unknown = off.filter((name) => name !== 'all' && !known.includes(name));
  if (unknown.length > 0) return { ok: false, unknown };
  const on = (name: SpeedTrickName) => !off.includes(name) && !off.includes('all');
  return { ok: true, tricks: Object.freeze({ keptAllows: on('kept-allows'), headerBlocks: on('header-blocks'), fastFront: on('fast-front') }) };
}

/** AUTHGATE_AUTHZ_SPEED_TRICKS_OFF's list as config/load.ts reads it: an unknown name is `refuse`d (the start stops). */
export function speedTricksOf(off: readonly string[], refuse: (problem: string) => void): SpeedTricks {
  const read = speedTricksWithout(off);
  if (read.ok) return read.tricks;
  refuse(`must list only ${SPEED_TRICK_NAMES.join(', ')} or all`);
  return ALL_SPEED_TRICKS;
}
