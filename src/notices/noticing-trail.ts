// The audit trail, with a notice queued for every event of a noticed type (notices/notice.ts).
import type { AuditTrail } from '../audit/trail.js';
import type { NoticeDelivery } from './delivery.js';
import { concernedRef } from './member-concerned.js';
import { NOTICED_TYPES } from './notice.js';

/**
 * Wraps `trail` so that recording an event of a type in NOTICED_TYPES (about an organization) also
 * queues its notice. Both happen synchronously and neither waits: the trail writes on the next
 * turn, the notice goes out from the delivery's queue. The extras reach the notice only.
 */
export function withNotices(trail: AuditTrail, delivery: NoticeDelivery, now: () => number): AuditTrail {
  return {
    record(event, extras) {
      trail.record(event);
      const { orgId } = event;
      if (orgId !== undefined && NOTICED_TYPES.has(event.type)) {
        const noticed = { ...event, orgId, at: now() };
        delivery.enqueue({ event: noticed, extras, concerns: concernedRef(noticed) });
      }
    },
    flush: () => trail.flush(),
  };
}
