/**
 * One read at a time; a change announced during a read makes one more after it (the read in flight
 * may predate the change). Shared by the tables every replica holds whole and reads again on an
 * announcement: the rate-limit overrides (limits/policy.ts), the organizations' plans
 * (plans/organization-plans.ts) and the keys' own quotas (limits/key-quotas.ts).
 */
export function coalescedReload(read: () => Promise<void>): () => Promise<void> {
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
