/**
 * Noticing that the routes file changed, so the reloader (reload.ts) runs without a SIGHUP.
 *
 * The DIRECTORY is watched, never the file: a Kubernetes ConfigMap volume holds
 * `routes.yaml -> ..data/routes.yaml` and `..data -> ..2026_…` (a timestamped directory); an
 * update writes a new timestamped directory and renames a new `..data` symlink over the old one.
 * The file's own symlink never changes, so a watch on it (inotify follows it to the old inode)
 * never fires again; editors that write a new file and rename it over the old one do the same.
 * A watch on the directory sees every such rename.
 *
 * Any event in the directory counts (its name is not trusted: `..data`, `..data_tmp`, a swap
 * file); events are debounced, then the file is read through its symlinks and hashed, and only
 * when its bytes differ from the last seen is the reload asked for. So an unrelated file in the
 * directory, or a touch, costs a read and a hash, and never a reload.
 */
import { createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../observability/logging.js';

export type RoutesFileWatcher = Readonly<{ close(): void }>;

export type WatchOptions = Readonly<{
  path: string;
  /** The file changed (its bytes differ from the last seen): reload it. */
  onChange: () => void;
  logger: Logger;
  /** Quiet time after the last event before the file is read: a ConfigMap swap is several events. */
  debounceMs?: number;
  /** When the watch itself fails (the directory removed), it is set up again after this. */
  retryMs?: number;
}>;

export const WATCH_DEBOUNCE_MS = 100;
const WATCH_RETRY_MS = 1000;

/** What the file holds now, as a hash; an unreadable file is a state of its own (its error code). */
async function contentOf(path: string): Promise<string> {
  try {
    return createHash('sha256').update(await readFile(path)).digest('hex');
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

function contentOfSync(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

/**
 * Watches the file's directory. The bytes read now are taken as the ones the live table came
 * from (the caller starts this right after loading it).
 */
export function watchRoutesFile(options: WatchOptions): RoutesFileWatcher {
  const { path, logger } = options;
  const directory = dirname(path);
  const debounceMs = options.debounceMs ?? WATCH_DEBOUNCE_MS;
  const retryMs = options.retryMs ?? WATCH_RETRY_MS;
  let seen = contentOfSync(path);
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;
  let again = false;
  let closed = false;

  const check = async (): Promise<void> => {
    // One read at a time; an event during a read gets one more read after it.
    if (checking !== undefined) {
      again = true;
      return;
    }
    checking = (async () => {
      do {
        again = false;
        const now = await contentOf(path);
        if (closed) return;
        if (now !== seen) {
          seen = now;
          options.onChange();
        }
      } while (again && !closed);
    })().finally(() => {
      checking = undefined;
    });
    return checking;
  };

  const schedule = () => {
    if (closed) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => void check(), debounceMs);
    debounce.unref();
  };

  const start = () => {
    if (closed) return;
    try {
      // persistent: false: the watch never keeps the process alive on its own.
      watcher = watch(directory, { persistent: false }, schedule);
    } catch (error) {
      failed(error);
      return;
    }
    watcher.on('error', failed);
  };

  function failed(error: unknown): void {
    watcher?.close();
    watcher = undefined;
    if (closed) return;
    logger.warn(
      { event: 'routes_watch_failed', directory, err: error instanceof Error ? { message: error.message } : String(error) },
      `cannot watch ${directory} for changes of the routes file (retrying; SIGHUP still reloads)`,
    );
    retry = setTimeout(() => {
      start();
      // Whatever happened while the watch was down.
      schedule();
    }, retryMs);
    retry.unref();
  }

  start();
  return {
    close() {
      closed = true;
      clearTimeout(debounce);
      clearTimeout(retry);
      watcher?.close();
      watcher = undefined;
    },
  };
}
