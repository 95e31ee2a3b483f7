/**
 * The TLS files a start reads, parsed when the configuration is loaded, so a bad file stops the
 * start (and `--check`) naming its setting, before any listener opens or any connection is made.
 * Without this a corrupt CA bundle passes the load (tls.createSecureContext accepts it) and
 * fails later, at every Redis handshake, as an unnamed certificate error; a certificate and a
 * key that do not belong together fail inside the HTTPS server, naming neither setting.
 * Problems never quote a file's content (a key file is a secret); at most its place in a bundle.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export type PemResult<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Every certificate of a PEM bundle, each parsed; a problem says which one (by position). */
export function parseCertificates(text: string): PemResult<X509Certificate[]> {
  const blocks = text.match(CERTIFICATE) ?? [];
  if (blocks.length === 0) return { ok: false, problem: 'holds no PEM certificate' };
  const certificates: X509Certificate[] = [];
  for (const [index, block] of blocks.entries()) {
    try {
      certificates.push(new X509Certificate(block));
    } catch {
      const which = blocks.length === 1 ? 'its certificate' : `certificate ${index + 1} of ${blocks.length}`;
      return { ok: false, problem: `holds a PEM block that is not a valid certificate (${which})` };
    }
  }
  return { ok: true, value: certificates };
}

/** A PEM private key (PKCS#8, PKCS#1 or SEC1), unencrypted: the gateway has no passphrase. */
export function parsePrivateKey(text: string): PemResult<KeyObject> {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) return { ok: false, problem: 'holds no PEM private key' };
  try {
    return { ok: true, value: createPrivateKey({ key: text, format: 'pem' }) };
  } catch (error) {
    const encrypted = (error as { code?: unknown }).code === 'ERR_MISSING_PASSPHRASE';
    return { ok: false, problem: encrypted ? 'holds an encrypted private key: authgate needs it unencrypted' : 'holds a PEM private key that cannot be parsed' };
  }
}

/** A file's text, or undefined when it cannot be read (the caller names the setting). */
export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

export type FileProblem<N extends string> = { name: N; problem: string };

/** The public port's certificate chain and key: each parsed, and the key the certificate's. */
export function tlsKeyPairProblems<C extends string, K extends string>(cert: { name: C; file: string }, key: { name: K; file: string }): FileProblem<C | K>[] {
  const problems: FileProblem<C | K>[] = [];
  const certText = readText(cert.file);
  const keyText = readText(key.file);
  const certificates = certText === undefined ? undefined : parseCertificates(certText);
  const privateKey = keyText === undefined ? undefined : parsePrivateKey(keyText);
  if (certificates === undefined) problems.push({ name: cert.name, problem: 'cannot be read' });
  else if (!certificates.ok) problems.push({ name: cert.name, problem: certificates.problem });
  if (privateKey === undefined) problems.push({ name: key.name, problem: 'cannot be read' });
  else if (!privateKey.ok) problems.push({ name: key.name, problem: privateKey.problem });
  if (certificates?.ok && privateKey?.ok && !certificates.value[0]!.checkPrivateKey(privateKey.value)) {
    problems.push({ name: key.name, problem: `is not the key of the first certificate in ${cert.name}` });
  }
  return problems;
}
