import type { Store } from '../store/store.js';

/**
 * Liveness and readiness, in the Kubernetes meaning: live while the process can answer at all;
 * ready while the store answers and the gateway is not draining. The store is pinged on a timer
 * (unref'd), so a probe reads state and never waits on Redis.
 *
 * A replica without its revocation channel stays ready: it answers correctly, reading every
 * credential from the store (no cache), only slower; taking it out of rotation would move its
 * load onto the others, which are likely in the same state (a missing ACL channel right is
 * usually shared). /readyz says so in its detail, and authgate_invalidation_subscribed is 0.
 */
export type Health = {
  readonly live: boolean;
  readonly ready: boolean;
  readonly storeUp: boolean;
  /** Whether revocations made elsewhere reach this replica (its cache is in use). */
  readonly invalidationSubscribed: boolean;
  startDraining(): void;
  stop(): void;
};

export function createHealth(
  store: Store,
  onStoreUp: (up: boolean) => void,
  options: { intervalMs?: number; invalidationSubscribed?: () => boolean } = {},
): Health {
  const intervalMs = options.intervalMs ?? 2000;
  const invalidationSubscribed = options.invalidationSubscribed ?? (() => true);
  // Not ready until the store has answered once: a pod must not take traffic before it can check
  // a credential (a Redis that is unreachable from the start would otherwise look fine until the
  // first ping failed).
  let storeUp = false;
  let draining = false;
  const check = async () => {
    try {
      await store.ping();
      storeUp = true;
    } catch {
      storeUp = false;
    }
    onStoreUp(storeUp);
  };
  const timer = setInterval(check, intervalMs);
  timer.unref();
  void check();
  return {
    live: true,
    get ready() {
      return storeUp && !draining;
    },
    get storeUp() {
      return storeUp;
    },
    get invalidationSubscribed() {
      return invalidationSubscribed();
    },
    startDraining() {
      draining = true;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
