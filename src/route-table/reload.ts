/**
 * Reloading the route table without a restart (issue 28): on SIGHUP (main.ts) and when the file
 * changes (route-table/watch.ts), the file is loaded (parsed, validated, compiled: `load`, the
 * same function the start uses) and, when it is good, swapped in with one assignment
 * (live.ts). A request in flight keeps the route it matched; the next reads the new table.
 *
 * A bad file changes nothing: the table in use stays, one log line says every error, the
 * reloads counter says `error`, and readiness stays up (the replica serves correctly, with the
 * table it had: taking every replica out of rotation over a typo would be an outage).
 *
 * Reloads never overlap: one asked for while another runs is done once after it (the file may
 * have changed again meanwhile), and every caller meanwhile shares that one.
 */
import type { Logger } from '../observability/logging.js';
import type { LiveRouteTable } from './live.js';
import type { RouteTable } from './types.js';

/** What loading the file gave: a table, or every error as a line (file:line, pointer, message). */
export type RouteLoadOutcome = { ok: true; table: RouteTable } | { ok: false; errors: readonly string[] };

/** What asked for the reload: the signal, or the file watcher. */
export type ReloadTrigger = 'signal' | 'file';

export type ReloadResult =
  | Readonly<{ result: 'applied'; hash: string; previous: string }>
  /** The file is good and compiles to the table in use (same hash): nothing swapped. */
  | Readonly<{ result: 'unchanged'; hash: string }>
  | Readonly<{ result: 'error'; hash: string; errors: readonly string[] }>;

export type RouteReloader = Readonly<{
  reload(trigger: ReloadTrigger): Promise<ReloadResult>;
}>;

export type RouteReloaderDeps = Readonly<{
  routes: LiveRouteTable;
  load: () => RouteLoadOutcome | Promise<RouteLoadOutcome>;
  logger: Logger;
  /** Counts each reload: `ok` (applied or unchanged) or `error` (authgate_routes_reloads_total). */
  count: (result: 'ok' | 'error') => void;
}>;

/** At most this many errors go on the log line: a file of garbage must not make a megabyte line. */
const MAX_LOGGED_ERRORS = 50;

export function createRouteReloader(deps: RouteReloaderDeps): RouteReloader {
  const { routes, logger } = deps;
  let running: Promise<ReloadResult> | undefined;
  let queued: Promise<ReloadResult> | undefined;

  const once = async (trigger: ReloadTrigger): Promise<ReloadResult> => {
    let outcome: RouteLoadOutcome;
    try {
      outcome = await deps.load();
    } catch (error) {
      // The loader reports a bad file as errors; a throw is something else (e.g. the disk), and
      // still must not take the gateway down or change its table.
      outcome = { ok: false, errors: [`could not load the routes file: ${error instanceof Error ? error.message : String(error)}`] };
    }
    const current = routes.current();
    if (!outcome.ok) {
      deps.count('error');
      const errors = outcome.errors.slice(0, MAX_LOGGED_ERRORS);
      logger.error(
        { event: 'routes_reload_failed', trigger, source: current.source, hash: current.hash, errors, errorCount: outcome.errors.length },
        `routes file rejected (${outcome.errors.length} error${outcome.errors.length === 1 ? '' : 's'}): still serving table ${current.hash}`,
      );
      return { result: 'error', hash: current.hash, errors: outcome.errors };
    }
    deps.count('ok');
    const { table } = outcome;
    if (table.hash === current.hash) {
      logger.info({ event: 'routes_reload_unchanged', trigger, source: table.source, hash: table.hash }, `routes file reloaded: table ${table.hash} unchanged`);
      return { result: 'unchanged', hash: table.hash };
    }
    routes.swap(table);
    logger.info(
      { event: 'routes_reloaded', trigger, source: table.source, hash: table.hash, previous: current.hash, routes: table.routes.length },
      `routes reloaded: table ${table.hash} (was ${current.hash})`,
    );
    return { result: 'applied', hash: table.hash, previous: current.hash };
  };

  const start = (trigger: ReloadTrigger): Promise<ReloadResult> => {
    const run = once(trigger).finally(() => {
      running = undefined;
    });
    running = run;
    return run;
  };

  return {
    reload(trigger) {
      if (running === undefined) return start(trigger);
      // One is running: it may have read the file before this change, so one more runs after it,
      // shared by everyone who asks until it starts.
      queued ??= running.then(
        () => {
          queued = undefined;
          return start(trigger);
        },
        () => {
          queued = undefined;
          return start(trigger);
        },
      );
      return queued;
    },
  };
}
