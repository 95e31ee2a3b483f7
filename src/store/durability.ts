import { StoreUnavailable } from './store.js';

/**
 * Thrown by a credential write (the Redis store with AUTHGATE_REDIS_WAIT_REPLICAS set) when the
 * write was made on the master but fewer replicas than asked acknowledged it in time: it would
 * be lost if the master crashed now. The answer is 503 (1511), an operational failure, not the
 * client's; the write may stand (a retry of a creation may create a second key).
 *
 * A StoreUnavailable, so that everything treating the store as failing does so here too: it is
 * counted in authgate_store_errors_total by the write's operation (writes are failing: that
 * should page), and request/error-handler.ts renders it as its own problem.
 */
export class WriteNotReplicated extends StoreUnavailable {
  readonly acknowledged: number;
  readonly wanted: number;

  constructor(acknowledged: number, wanted: number) {
    super(`credential write acknowledged by ${acknowledged} of ${wanted} Redis replicas`);
    this.acknowledged = acknowledged;
    this.wanted = wanted;
    this.name = 'WriteNotReplicated';
  }
}
