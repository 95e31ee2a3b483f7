import { createRateLimitPolicy } from '../../src/limits/policy.js';
import type { RateLimit } from '../../src/limits/rate-limit.js';
import { createRateLimitService, type RateLimitService } from '../../src/services/rate-limits.js';
import { createLocalInvalidationBus } from '../../src/store/invalidation.js';
import type { RateLimitStore } from '../../src/store/rate-limits.js';

/** The rate-limit overrides service over a store, as gateway-services.ts wires it, for service tests. */
export async function rateLimitServiceOver(store: RateLimitStore, defaultLimit?: RateLimit): Promise<RateLimitService> {
  const policy = await createRateLimitPolicy({ store, bus: createLocalInvalidationBus(), defaultLimit, logger: { warn() {} } });
  return createRateLimitService({ store, policy });
}
