import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

export type CertificateAuthority = {
  dir: string;
  caFile: string;
  /** A leaf certificate signed by this CA, for the given DNS names and IP addresses. */
  issue(name: string, subjectAltNames: { dns?: string[]; ips?: string[] }): { certFile: string; keyFile: string };
  cleanup(): void;
};

/**
 * A throwaway private CA, made per test run with openssl (no key is ever committed): servers get
 * certificates from it, and clients trust it alone, as with a company CA.
 */
export function makeCertificateAuthority(dir = mkdtempSync(join(tmpdir(), 'authgate-ca-')), name = 'ca'): CertificateAuthority {
  const caFile = join(dir, `${name}.crt`);
  const caKey = join(dir, `${name}.key`);
  const quiet = { stdio: 'ignore' } as const;
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-subj', `/CN=authgate test ${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    '-days', '1', '-keyout', caKey, '-out', caFile,
  ], quiet);
  let serial = 1;
  return {
    dir,
    caFile,
    issue(leaf, { dns = [], ips = [] }) {
      const certFile = join(dir, `${leaf}.crt`);
      const keyFile = join(dir, `${leaf}.key`);
      const csr = join(dir, `${leaf}.csr`);
      const ext = join(dir, `${leaf}.ext`);
      const names = [...dns.map((d) => `DNS:${d}`), ...ips.map((ip) => `IP:${ip}`)].join(',');
      // clientAuth too: Redis nodes present the same certificate when they connect to each other.
      writeFileSync(ext, `subjectAltName=${names}\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\n`);
      execFileSync('openssl', [
        'req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-subj', `/CN=${dns[0] ?? ips[0] ?? leaf}`, '-keyout', keyFile, '-out', csr,
      ], quiet);
      execFileSync('openssl', [
        'x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-set_serial', String(serial++),
        '-days', '1', '-extfile', ext, '-out', certFile,
      ], quiet);
      return { certFile, keyFile };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
