// AUTHGATE_TLS and its certificate and key files: the public listener's own TLS, read apart from
// config/load.ts. The pair is read and matched now (config/pem.ts), so a bad file stops the start.
import type { Config } from './config.js';
import { tlsKeyPairProblems } from './pem.js';
import type { SettingsReader } from './redis-tls.js';

/** Both files or neither; with them TLS is on, and a mode that says otherwise is refused. */
export function readTls({ setting, fail }: SettingsReader): Config['tls'] {
  const mode = setting('AUTHGATE_TLS');
  const certFile = setting('AUTHGATE_TLS_CERT_FILE');
  const keyFile = setting('AUTHGATE_TLS_KEY_FILE');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    fail(certFile === undefined ? 'AUTHGATE_TLS_CERT_FILE' : 'AUTHGATE_TLS_KEY_FILE', 'must be set together with the other TLS file');
  }
  if (certFile !== undefined && keyFile !== undefined) {
    if (mode === 'off' || mode === 'offloaded') fail('AUTHGATE_TLS', 'cannot be off or offloaded while TLS files are set');
    const pair = tlsKeyPairProblems({ name: 'AUTHGATE_TLS_CERT_FILE', file: certFile }, { name: 'AUTHGATE_TLS_KEY_FILE', file: keyFile });
    for (const { name, problem } of pair) fail(name, problem);
    return { mode: 'on', certFile, keyFile };
  }
  if (mode === 'on') fail('AUTHGATE_TLS_CERT_FILE', 'and AUTHGATE_TLS_KEY_FILE are required when AUTHGATE_TLS=on');
  return { mode: mode === 'offloaded' ? 'offloaded' : 'off' };
}
