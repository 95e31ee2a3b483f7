import { randomUUID, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify, errors, type JWTHeaderParameters } from 'jose';
import type { Environment } from '../config/config.js';
import { sha256Base64url } from './digest.js';

/**
 * Login tokens: HS256 JWTs whose only identifying claim is an opaque session id (`sub`). The
 * organization is found through the store, so the token says nothing about who holds it, and
 * logout is a store delete. Keys are imported once; the algorithm is pinned, never read from
 * the token. A ring of keys by `kid` lets a new secret sign while the previous ones still verify.
 */
export type TokenSettings = Readonly<{
  secret: string;
  previousSecrets: readonly string[];
  issuer: string;
  ttlSeconds: number;
  environment: Environment;
}>;

export type VerifiedToken = Readonly<{ ok: true; sessionId: string; expiresAtMs: number }>;
export type RejectedToken = Readonly<{
  ok: false;
  reason: 'invalid' | 'expired' | 'wrong_environment';
  /** With wrong_environment: the environment the token belongs to. */
  environment?: Environment;
}>;

export type TokenService = Readonly<{
  ttlSeconds: number;
  sign(sessionId: string, nowMs: number): Promise<{ token: string; expiresAtMs: number }>;
  verify(token: string, nowMs: number): Promise<VerifiedToken | RejectedToken>;
}>;

const ALGORITHM = 'HS256';
const ENVIRONMENTS: readonly Environment[] = ['production', 'sandbox'];

export function audienceOf(environment: Environment): string {
  return `authgate:${environment}`;
}

/** A short public name for a secret: lets verification pick the key without trying each. */
export function keyIdOf(secret: string): string {
  return sha256Base64url(`authgate-kid:${secret}`).slice(0, 16);
}

export async function createTokenService(settings: TokenSettings): Promise<TokenService> {
  const importKey = (secret: string) =>
    webcrypto.subtle.importKey('raw', Buffer.from(secret, 'utf8'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);

  const signingKid = keyIdOf(settings.secret);
  const signingKey = await importKey(settings.secret);
  const ring = new Map<string, webcrypto.CryptoKey>([[signingKid, signingKey]]);
  for (const secret of settings.previousSecrets) ring.set(keyIdOf(secret), await importKey(secret));

  const audience = audienceOf(settings.environment);
  const verifyOptions = { algorithms: [ALGORITHM], issuer: settings.issuer, audience };
  const keyFor = (header: JWTHeaderParameters) => {
    const key = header.kid === undefined ? undefined : ring.get(header.kid);
    if (key === undefined) throw new errors.JWSSignatureVerificationFailed('unknown key id');
    return key;
  };

  return {
    ttlSeconds: settings.ttlSeconds,

    async sign(sessionId, nowMs) {
      // Whole seconds, and exp - iat is exactly ttlSeconds (the interface promises that lifetime).
      // Both from the issue time rounded up: a token lives at least ttlSeconds (rounded down, a
      // 1-second token issued late in a second would be expired before its first use), and iat is
      // at most 999 ms ahead, which nothing checks (jose looks at iat only with maxTokenAge).
      const iat = Math.ceil(nowMs / 1000);
      const exp = iat + settings.ttlSeconds;
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT', kid: signingKid })
        .setSubject(sessionId)
        .setJti(randomUUID())
        .setIssuer(settings.issuer)
        .setAudience(audience)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(signingKey);
      return { token, expiresAtMs: exp * 1000 };
    },

    async verify(token, nowMs) {
      try {
        const { payload } = await jwtVerify(token, keyFor, { ...verifyOptions, currentDate: new Date(nowMs) });
        if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return { ok: false, reason: 'invalid' };
        return { ok: true, sessionId: payload.sub, expiresAtMs: payload.exp * 1000 };
      } catch (error) {
        if (error instanceof errors.JWTExpired) return { ok: false, reason: 'expired' };
        // The signature was good (claims are checked after it), so the audience is genuine.
        if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') {
          const other = ENVIRONMENTS.find((env) => env !== settings.environment && error.payload.aud === audienceOf(env));
          if (other !== undefined) return { ok: false, reason: 'wrong_environment', environment: other };
        }
        return { ok: false, reason: 'invalid' };
      }
    },
  };
}
