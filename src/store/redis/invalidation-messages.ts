/**
 * The revocation channel's messages (docs/redis-layout.md, "Invalidation channel"): the head this
 * replica hands a revoking script (and its heartbeats) to complete, and the reading of every
 * message heard, which takes nothing but exactly that shape. Apart from the bus
 * (invalidation.ts), which decides what a message means for the credential cache.
 */
import type { Revoked } from '../store.js';

/** What travels on the channel. Only key hashes, session ids and organization ids: never a secret. */
export type Message = { origin: string; seq: number; revoked: Revoked[]; at?: number };

/** The JSON of one message of `origin` up to its revoked list: the script (or the heartbeat) appends `[…]}`. */
export function messageHead(origin: string, seq: number): string {
  // `at`: when this replica handed the message out (a script PUBLISHes it within its round trip).
  return `${JSON.stringify({ origin, seq, at: Date.now() }).slice(0, -1)},"revoked":`;
}

/** A message heard on the channel, or undefined for anything not exactly of its shape (ignored). */
export function parseMessage(text: string): Message | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value)) return undefined;
  const { origin, seq, revoked, at } = value;
  if (typeof origin !== 'string' || origin.length === 0) return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) return undefined;
  if (!Array.isArray(revoked)) return undefined;
  const items: Revoked[] = [];
  for (const item of revoked as unknown[]) {
    if (!isRecord(item)) return undefined;
    const { kind, cacheKey, created } = item;
    // rate_limits: the overrides of the organization cacheKey changed (store/rate-limits.ts);
    // profile: its name or e-mail (store/organization-profiles.ts); plan: its plan (store/organization-plans.ts);
    // key_quota: one of its keys' own quota (store/key-quotas.ts); organization: it was deleted, and its provider tokens with it (issue 49).
    if (kind !== 'api_key' && kind !== 'session' && kind !== 'rate_limits' && kind !== 'profile' && kind !== 'plan' && kind !== 'key_quota' && kind !== 'organization') return undefined;
    if (typeof cacheKey !== 'string' || cacheKey.length === 0) return undefined;
    items.push(kind === 'api_key' && created === true ? { kind, cacheKey, created } : { kind, cacheKey });
  }
  return { origin, seq, revoked: items, ...(typeof at === 'number' && Number.isFinite(at) && { at }) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
