// The gateway's close (Gateway.close, gateway.ts): what stops in which order, and why. Apart from
// the start so the order of the end reads as one list: the servers drain first, then what only
// requests used, then what still writes to the store, then the bus and the store, and after
// them only the export of the drained requests' spans.
import type { Health } from './observability/health.js';
import type { RoutesFileReloading } from './route-table/reload-file.js';
import type { InvalidationBus } from './store/invalidation.js';
import type { Store } from './store/store.js';
import type { Tracing } from './tracing/tracing.js';
import type { GatewayServers } from './gateway-servers.js';
import type { GatewayServices } from './gateway-services.js';

export type ShutdownParts = Readonly<{
  health: Health;
  servers: GatewayServers;
  services: GatewayServices;
  /** The routes file's watcher; undefined without a routes file. */
  reloading: RoutesFileReloading | undefined;
  /** The trusted issuers' registry (issuers/build.ts): its key refreshes. */
  issuers: Readonly<{ close(): void }>;
  /** The instrumented bus (observability/instrumentation.ts). */
  bus: InvalidationBus;
  /** The store as opened (gateway-parts.ts openStorage, or GatewayDeps.storage). */
  store: Store;
  tracing: Tracing | undefined;
}>;

/** Closes the servers (waiting for in-flight requests), then the rest, then the store. */
export async function closeGateway(parts: ShutdownParts): Promise<void> {
  const { health, servers, services } = parts;
  health.startDraining();
  await Promise.all([servers.publicServer.close(), servers.opsServer.close(), servers.authzServer?.close()]);
  health.stop();
  parts.reloading?.close();
  parts.issuers.close();
  services.limiter.close();
  services.routeLimiter.close();
  services.rateLimits.close();
  services.plans.close();
  // The uses noted since the last flush, before the store closes (failures are logged, not thrown).
  await services.keyUsage.close();
  await services.quotas.close();
  await services.audit.flush();
  // Before the store closes: each notice reads its organization when it is sent.
  await services.notices?.close();
  await parts.bus.close();
  await parts.store.close();
  // Last: the spans of the requests just drained are exported (bounded: tracing/sdk.ts).
  await parts.tracing?.shutdown();
}
