import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway self-signed certificate for localhost, made per test run with openssl, so no
 * private key is ever committed.
 */
export function makeCertificate(dir = mkdtempSync(join(tmpdir(), 'authgate-tls-')), name = 'tls') {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-days', '1', '-keyout', keyFile, '-out', certFile,
  ], { stdio: 'ignore' });
  return { dir, certFile, keyFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Replaces cert and key the way a rotation does: new files moved over the old ones. */
export function rotateCertificate(target: { dir: string; certFile: string; keyFile: string }) {
  const fresh = makeCertificate(target.dir, 'next');
  renameSync(fresh.keyFile, target.keyFile);
  renameSync(fresh.certFile, target.certFile);
}
