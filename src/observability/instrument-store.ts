import { StoreUnavailable, type Store } from '../store/store.js';
import type { Metrics } from './metrics.js';

/**
 * The store with its calls timed and its failures counted. Only store calls pay for this, and
 * those are cache misses and writes, never a cache hit.
 */
export function instrumentStore(store: Store, metrics: Metrics): Store {
  const timed = <A extends unknown[], R>(operation: string, call: (...args: A) => Promise<R>) => {
    const duration = metrics.storeDuration.labels(operation);
    const errors = metrics.storeErrors.labels(operation);
    return async (...args: A): Promise<R> => {
      const end = duration.startTimer();
      try {
        return await call(...args);
      } catch (error) {
        if (error instanceof StoreUnavailable) errors.inc();
        throw error;
      } finally {
        end();
      }
    };
  };
  return {
    createOrganizationIfEmailFree: timed('create_organization', store.createOrganizationIfEmailFree.bind(store)),
    findOrganizationByEmail: timed('find_organization', store.findOrganizationByEmail.bind(store)),
    findOrganizationById: timed('find_organization', store.findOrganizationById.bind(store)),
    deleteOrganization: timed('delete_organization', store.deleteOrganization.bind(store)),
    createApiKey: timed('create_api_key', store.createApiKey.bind(store)),
    findApiKeyByHash: timed('find_api_key', store.findApiKeyByHash.bind(store)),
    listApiKeys: timed('list_api_keys', store.listApiKeys.bind(store)),
    deleteApiKeyIfOwned: timed('delete_api_key', store.deleteApiKeyIfOwned.bind(store)),
    createSession: timed('create_session', store.createSession.bind(store)),
    findSession: timed('find_session', store.findSession.bind(store)),
    deleteSession: timed('delete_session', store.deleteSession.bind(store)),
    ping: store.ping.bind(store),
    close: store.close.bind(store),
  };
}
