/**
 * TOTP secrets encrypted at rest (issue 32): AES-256-GCM under AUTHGATE_MFA_ENCRYPTION_KEY, so a
 * copy of the store (a backup, a replica) does not hand out second factors. Each ciphertext names
 * its key by a short digest (`v1.<key id>.<iv>.<tag>.<ciphertext>`, base64url), so a rotation
 * keeps reading secrets sealed under a previous key (AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS) while
 * new ones are sealed under the current key. The organization id is the additional data: a
 * ciphertext copied onto another organization does not open.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export type SecretBox = Readonly<{
  seal(orgId: string, secret: string): string;
  /** The secret; undefined when no configured key opens it (or it was tampered with). */
  open(orgId: string, sealed: string): string | undefined;
}>;

/** 32 bytes from the configured text: SHA-256 of it, so any text of enough entropy serves. */
function keyBytes(text: string): Buffer {
  return createHash('sha256').update(`authgate-mfa-key:${text}`).digest();
}

function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 8);
}

export function createSecretBox(current: string, previous: readonly string[] = []): SecretBox {
  const currentKey = keyBytes(current);
  const currentId = keyId(currentKey);
  const byId = new Map<string, Buffer>([[currentId, currentKey]]);
  for (const text of previous) {
    const key = keyBytes(text);
    if (!byId.has(keyId(key))) byId.set(keyId(key), key);
  }
  return {
    seal(orgId, secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', currentKey, iv);
      cipher.setAAD(Buffer.from(orgId));
      const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return ['v1', currentId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
    },
    open(orgId, sealed) {
      const [version, id, iv, tag, body] = sealed.split('.');
      const key = id === undefined ? undefined : byId.get(id);
      if (version !== 'v1' || key === undefined || iv === undefined || tag === undefined || body === undefined) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
        decipher.setAAD(Buffer.from(orgId));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
