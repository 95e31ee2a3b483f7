import type { Revoked } from './store.js';

/** What a listener hears: revoked credentials, or 'all' when messages may have been missed. */
export type Invalidation = readonly Revoked[] | 'all';
export type InvalidationListener = (invalidation: Invalidation) => void;

/**
 * Carries revocations to every replica's credential cache. publish() tells this replica's
 * listeners at once (so a revocation is never served from the local cache after the write
 * returns), then the other replicas.
 */
export interface InvalidationBus {
  publish(revoked: readonly Revoked[]): Promise<void>;
  onInvalidation(listener: InvalidationListener): void;
  close(): Promise<void>;
}

/** The bus of a single process: the embedded store's, where there are no other replicas. */
export function createLocalInvalidationBus(): InvalidationBus {
  const listeners: InvalidationListener[] = [];
  return {
    async publish(revoked) {
      if (revoked.length === 0) return;
      for (const listener of listeners) listener(revoked);
    },
    onInvalidation(listener) {
      listeners.push(listener);
    },
    async close() {
      listeners.length = 0;
    },
  };
}
