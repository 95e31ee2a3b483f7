import type { InvalidationBus } from './invalidation.js';
import type { Revoked } from './store.js';

/**
 * A small table every replica holds whole and reads again when any replica announces a change of
 * it on the invalidation bus: the rate-limit overrides (limits/policy.ts), the organizations'
 * plans (plans/organization-plans.ts) and the keys' own quotas (limits/key-quotas.ts). What they
 * share is here, once; each keeps what it reads, what holds until the first read, and its lookups.
 *
 * - Read once at start. A gateway starts while its store may still be connecting (or down): a
 *   failed first read does not stop the start; it is tried again every second until one succeeds.
 * - Read again on an announcement of its kind, or on 'all' (messages may have been missed: every
 *   (re)subscription says it). A failed read there keeps the table in memory and is reported.
 * - One read at a time; a change announced during a read makes one more after it (the read in
 *   flight may predate the change).
 */
export type ReplicatedTable = Readonly<{
  /** Reads the table now (after this replica changed it): rejects when the store did not answer. */
  reload(): Promise<void>;
  /** Stops the retries and the listening; the table in memory stays as it is. */
  close(): void;
}>;

export async function replicateTable(deps: {
  /** Reads the whole table from the store and makes it the one in use. */
  read: () => Promise<void>;
  /** The announcement (`Revoked['kind']`) that says this table changed. */
  kind: Revoked['kind'];
  bus: Pick<InvalidationBus, 'onInvalidation'>;
  /** A read after an announcement failed: the table in memory is kept (its owner logs why). */
  onReloadFailed: (error: unknown) => void;
}): Promise<ReplicatedTable> {
  let loaded = false;
  let closed = false;
  const reload = coalescedReload(async () => {
    await deps.read();
    loaded = true;
  });
  const quiet = () => {};
  await reload().catch(quiet);
  const retry = setInterval(() => {
    if (loaded || closed) clearInterval(retry);
    else void reload().catch(quiet);
  }, 1000);
  retry.unref();
  deps.bus.onInvalidation((invalidation) => {
    if (closed) return;
    if (invalidation === 'all' || invalidation.some((revoked) => revoked.kind === deps.kind)) void reload().catch(deps.onReloadFailed);
  });
  return {
    reload,
    close() {
      closed = true;
      clearInterval(retry);
    },
  };
}

/** One read at a time; a call during a read makes one more after it, and shares its promise. */
function coalescedReload(read: () => Promise<void>): () => Promise<void> {
  let reading: Promise<void> | undefined;
  let again = false;
  return function reload(): Promise<void> {
    if (reading !== undefined) {
      again = true;
      return reading;
    }
    reading = (async () => {
      try {
        do {
          again = false;
          await read();
        } while (again);
      } finally {
        reading = undefined;
      }
    })();
    return reading;
  };
}
