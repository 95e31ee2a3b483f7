/**
 * A real identity signing key for tests that start a production gateway: production refuses to
 * start without AUTHGATE_IDENTITY_KEY_FILE while the identity assertion is on (config/load.ts).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh P-256 private key as a PKCS#8 PEM. */
export function identityKeyPem(): string {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

let dir: string | undefined;
let file: string | undefined;

/**
 * The path of a file holding a P-256 PKCS#8 PEM private key, for AUTHGATE_IDENTITY_KEY_FILE.
 * One key per test process, written on first use and removed when the process exits.
 */
export function identityKeyFile(): string {
  if (file !== undefined) return file;
  dir = mkdtempSync(join(tmpdir(), 'authgate-identity-key-'));
  const path = join(dir, 'identity-key.pem');
  writeFileSync(path, identityKeyPem(), { mode: 0o600 });
  const created = dir;
  process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  return (file = path);
}

/**
 * A PEM boundary line (`-----BEGIN <label>-----`), for tests that check or fake one. Built from
 * parts so that no source file holds text a secret scanner reads as a committed private key:
 * every key the tests use is generated at run time.
 */
export function pemBegin(label: string): string {
  return `${'-'.repeat(5)}BEGIN ${label}${'-'.repeat(5)}`;
}
