/**
 * The route table's metrics (issue 28): which table each replica serves, so a rollout can check
 * every replica converged on one hash, and how its reloads went.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { RouteTableSource } from '../route-table/types.js';

export type RouteMetrics = Readonly<{
  /** One reload of the routes file, by result: ok (applied, or the same table again) or error (the old table kept). */
  countReload(result: 'ok' | 'error'): void;
}>;

export function registerRouteMetrics(registry: Registry, routes: RouteTableSource): RouteMetrics {
  const reloads = new Counter({
    name: 'authgate_routes_reloads_total',
    help: 'Reloads of the routes file (SIGHUP or a change of the file), by result: ok (the file was good; its table is served) or error (the file was refused and the table in use kept: see the routes_reload_failed log line).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // Both series from the start, so increase() sees the first error.
  reloads.inc({ result: 'ok' }, 0);
  reloads.inc({ result: 'error' }, 0);
  new Gauge({
    name: 'authgate_routes_table_info',
    help: 'Always 1: the hash of the route table this replica serves (the built-in table when no routes file is set); every replica of a rollout shows the same one once converged.',
    labelNames: ['hash'] as const,
    registers: [registry],
    // Read at scrape time: one series, the live table's (the previous one's is dropped).
    collect() {
      this.reset();
      this.set({ hash: routes.current().hash }, 1);
    },
  });
  return { countReload: (result) => reloads.inc({ result }) };
}
