// When each API key was last used, without a store write per request (lastUsedAt in listings).
import type { Principal } from '../credentials/principal.js';
import type { Logger } from '../observability/logging.js';
import type { ApiKeyUse, Store } from '../store/store.js';

/** How often a replica writes the uses it noted: so a key's lastUsedAt is at most this late. */
export const KEY_USE_FLUSH_MS = 60_000;

/**
 * Each replica notes the uses of API keys in memory (one Map lookup per request) and writes them
 * once per flush interval, one entry per key used, in one batch (recordApiKeyUse): at most one
 * write per key per interval on each replica, whatever the traffic. So lastUsedAt is precise to
 * the interval, and a replica that dies loses at most its last interval's uses. A batch that
 * fails is kept (merged with newer uses) for the next flush.
 */
export type KeyUsageTracker = {
  /** Called with every allowed API-key request's principal: the hot path. */
  note(principal: Principal): void;
  /** The use noted here and not yet written, for a listing on this replica. */
  pendingUse(keyId: string): number | undefined;
  /** Writes what is noted now (the timer calls this; close() does a last time). */
  flush(): Promise<void>;
  /** Stops the timer and flushes once more. */
  close(): Promise<void>;
};

type Use = { orgId: string; at: number };

export function createKeyUsageTracker(deps: {
  store: Pick<Store, 'recordApiKeyUse'>;
  now: () => number;
  logger: Pick<Logger, 'warn'>;
  flushIntervalMs?: number;
}): KeyUsageTracker {
  const { store, now, logger } = deps;
  let pending = new Map<string, Use>();
  /** The batch being written: still this replica's news until the store has it. */
  let writing: Map<string, Use> | undefined;
  let flushing: Promise<void> | undefined;

  async function write(): Promise<void> {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    writing = batch;
    const uses: ApiKeyUse[] = [];
    for (const [keyId, { orgId, at }] of batch) uses.push({ orgId, keyId, at });
    try {
      await store.recordApiKeyUse(uses);
    } catch (error) {
      // Kept for the next flush, unless a newer use of the key came in meanwhile.
      for (const [keyId, use] of batch) if (!pending.has(keyId)) pending.set(keyId, use);
      logger.warn({ event: 'api_key_use_flush_failed', keys: batch.size, error: (error as Error).message }, 'API key uses not written; kept for the next flush');
    } finally {
      writing = undefined;
    }
  }

  const flush = () => (flushing ??= write().finally(() => (flushing = undefined)));

  const timer = setInterval(() => void flush(), deps.flushIntervalMs ?? KEY_USE_FLUSH_MS);
  timer.unref();

  return {
    note(principal) {
      const use = pending.get(principal.credentialId);
      if (use === undefined) pending.set(principal.credentialId, { orgId: principal.orgId, at: now() });
      else use.at = now();
    },
    pendingUse: (keyId) => pending.get(keyId)?.at ?? writing?.get(keyId)?.at,
    flush,
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}
