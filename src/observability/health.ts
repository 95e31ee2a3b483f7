import type { Store } from '../store/store.js';

/**
 * Liveness and readiness, in the Kubernetes meaning: live while the process can answer at all;
 * ready while the store answers and the gateway is not draining. The store is pinged on a timer
 * (unref'd), so a probe reads state and never waits on Redis.
 */
export type Health = {
  readonly live: boolean;
  readonly ready: boolean;
  readonly storeUp: boolean;
  startDraining(): void;
  stop(): void;
};

export function createHealth(store: Store, onStoreUp: (up: boolean) => void, intervalMs = 2000): Health {
  let storeUp = true;
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
    startDraining() {
      draining = true;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
