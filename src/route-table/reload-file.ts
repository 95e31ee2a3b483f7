/**
 * The routes file kept live: the reloader (reload.ts) reading the file with the loader the start
 * uses (load.ts), and the watcher (watch.ts) asking for a reload when the file's bytes change.
 * SIGHUP (main.ts) asks for one too, through the gateway.
 */
import type { Logger } from '../observability/logging.js';
import type { LiveRouteTable } from './live.js';
import { formatRouteError, loadRoutesFile, type LoadContext } from './load.js';
import { createRouteReloader, type ReloadResult, type ReloadTrigger } from './reload.js';
import { watchRoutesFile } from './watch.js';

export type RoutesFileReloading = Readonly<{
  reload(trigger: ReloadTrigger): Promise<ReloadResult>;
  /** Stops watching (the gateway's close). */
  close(): void;
}>;

export function reloadRoutesFile(options: {
  routes: LiveRouteTable;
  path: string;
  context: LoadContext;
  logger: Logger;
  count: (result: 'ok' | 'error') => void;
  /** Watch the file's directory; without it only SIGHUP reloads. */
  watch: boolean;
}): RoutesFileReloading {
  const { routes, path, context, logger } = options;
  const reloader = createRouteReloader({
    routes,
    logger,
    count: options.count,
    load: () => {
      const loaded = loadRoutesFile(path, context);
      return loaded.ok ? { ok: true, table: loaded.table } : { ok: false, errors: loaded.errors.map(formatRouteError) };
    },
  });
  const watcher = options.watch ? watchRoutesFile({ path, logger, onChange: () => void reloader.reload('file') }) : undefined;
  return { reload: (trigger) => reloader.reload(trigger), close: () => watcher?.close() };
}
