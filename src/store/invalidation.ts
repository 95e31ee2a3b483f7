import type { Revoked } from './store.js';

/** What a listener hears: revoked credentials, or 'all' when messages may have been missed. */
export type Invalidation = readonly Revoked[] | 'all';
/**
 * `publishedAt`: for revocations another replica announced, when it handed out the message
 * (its clock, epoch ms): what authgate_revocation_propagation_seconds measures from.
 */
export type InvalidationListener = (invalidation: Invalidation, publishedAt?: number) => void;
export type SubscriptionListener = (subscribed: boolean) => void;

/**
 * Carries revocations to every replica's credential cache.
 *
 * The announcement to the other replicas is part of the store's write itself (the Redis store's
 * revoking scripts PUBLISH in the same step as their DEL), so a revocation is announced exactly
 * when it is committed. What is left for the caller is this replica: applyLocally() tells its own
 * listeners at once, so a revocation is never served from the local cache after the write returns.
 */
export interface InvalidationBus {
  /** Revocations this replica just committed: told to this replica's listeners, synchronously. */
  applyLocally(revoked: readonly Revoked[]): void;
  onInvalidation(listener: InvalidationListener): void;
  /**
   * True only while revocations made elsewhere are sure to reach this replica (Redis: the
   * SUBSCRIBE was answered on a connection that is still up). While false, a credential cache
   * must not be trusted: the gateway then reads every credential from the store.
   */
  readonly subscribed: boolean;
  /** Told each time `subscribed` changes; on true, after listeners were told 'all'. */
  onSubscriptionChange(listener: SubscriptionListener): void;
  close(): Promise<void>;
}

/**
 * The bus of a single process: the embedded store's, where there are no other replicas, so it
 * is always "subscribed".
 */
export function createLocalInvalidationBus(): InvalidationBus {
  const listeners: InvalidationListener[] = [];
  return {
    applyLocally(revoked) {
      if (revoked.length === 0) return;
      for (const listener of listeners) listener(revoked);
    },
    onInvalidation(listener) {
      listeners.push(listener);
    },
    subscribed: true,
    onSubscriptionChange() {},
    async close() {
      listeners.length = 0;
    },
  };
}
