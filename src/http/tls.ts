import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';

/**
 * TLS for the public port when the gateway terminates it itself. Certificates are rotated by
 * replacing the files (cert-manager, a mounted Secret): they are polled, and a change swaps the
 * secure context without a restart. Polling rather than fs.watch, because Kubernetes replaces
 * a mounted Secret by swapping symlinks, which fs.watch does not reliably see.
 */
export const TLS_MIN_VERSION = 'TLSv1.2';

export function readTlsFiles(files: { certFile: string; keyFile: string }): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

export function reloadTlsOnChange(
  server: HttpsServer,
  files: { certFile: string; keyFile: string },
  onReload: (outcome: 'reloaded' | 'failed') => void,
  intervalMs = 2000,
): () => void {
  const reload = () => {
    try {
      server.setSecureContext({ ...readTlsFiles(files), minVersion: TLS_MIN_VERSION });
      onReload('reloaded');
    } catch {
      onReload('failed'); // keep serving the previous certificate; a half-written file is not fatal
    }
  };
  const options = { interval: intervalMs, persistent: false };
  watchFile(files.certFile, options, reload);
  watchFile(files.keyFile, options, reload);
  return () => {
    unwatchFile(files.certFile, reload);
    unwatchFile(files.keyFile, reload);
  };
}
