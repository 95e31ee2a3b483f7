/**
 * A provider's JWT access token checked against its issuer (issue 49): the signature with the
 * issuer's followed keys (keys.ts), the algorithm from the file's allow-list (never the token's
 * word alone: jose refuses an `alg` not listed before it looks for a key, so `none` and HS* never
 * reach one), `iss` exactly, any one of the audiences, `exp` (required) and `nbf` within the
 * clock skew, `typ` when required (RFC 9068), then the claims that name the organization and the
 * scopes. Throws KeysUnavailable (503) when the keys cannot be had; every other failure is a refusal.
 */
import { errors, jwtVerify, type JWTPayload, type JWTVerifyOptions } from 'jose';
import { isScopeName } from '../authz/scopes.js';
import type { IssuerKeys } from './keys.js';
import type { CompiledIssuer } from './types.js';

/** Why a token was refused: the metric's `reason` label and the log's. */
export const ISSUER_REFUSALS = ['signature', 'algorithm', 'issuer', 'audience', 'expired', 'not_yet_valid', 'type', 'claims', 'no_organization', 'unknown_organization', 'keys_unavailable', 'route', 'inactive', 'introspection_unavailable'] as const;
export type IssuerRefusal = (typeof ISSUER_REFUSALS)[number];

export type VerifiedIssuerToken = Readonly<{
  ok: true;
  subject: string;
  /** The organization's external id at this issuer (organization: {claim}), or its id (organization: {fixed}). */
  organization: Readonly<{ externalId: string }> | Readonly<{ orgId: string }>;
  /** Scope names, renamed by scopeMap, only those of scope-name form. */
  scopes: readonly string[];
  expiresAtMs: number;
}>;
export type RefusedIssuerToken = Readonly<{ ok: false; reason: IssuerRefusal }>;

export function verifyOptions(issuer: CompiledIssuer): JWTVerifyOptions {
  return {
    algorithms: [...issuer.algorithms],
    issuer: issuer.issuer,
    audience: [...issuer.audiences],
    clockTolerance: issuer.clockSkewSeconds,
    requiredClaims: ['exp', 'sub'],
    ...(issuer.requireType !== undefined && { typ: issuer.requireType }),
  };
}

export async function verifyIssuerToken(token: string, issuer: CompiledIssuer, keys: IssuerKeys, options: JWTVerifyOptions, nowMs: number): Promise<VerifiedIssuerToken | RefusedIssuerToken> {
  let payload: JWTPayload;
  try {
    payload = await verifyAgainstKeys(token, keys, { ...options, currentDate: new Date(nowMs) });
  } catch (error) {
    return { ok: false, reason: refusalOf(error) };
  }
  return principalClaims(payload, issuer, payload.sub!, payload.exp! * 1000);
}

/**
 * The scopes and the organization of a token whose signature and time claims were checked (a
 * JWT's payload here, an introspection answer in introspect-claims.ts): one reading for both.
 */
export function principalClaims(claims: Readonly<Record<string, unknown>>, issuer: CompiledIssuer, subject: string, expiresAtMs: number): VerifiedIssuerToken | RefusedIssuerToken {
  const scopes = scopesOf(claims, issuer);
  if (scopes === undefined) return { ok: false, reason: 'claims' };
  if ('fixed' in issuer.organization) return { ok: true, subject, organization: { orgId: issuer.organization.fixed }, scopes, expiresAtMs };
  const value = claims[issuer.organization.claim];
  if (typeof value !== 'string' || value === '' || value.length > 200) return { ok: false, reason: 'no_organization' };
  return { ok: true, subject, organization: { externalId: value }, scopes, expiresAtMs };
}

/**
 * jwtVerify with the issuer's key function; a token without `kid` that several keys of its type
 * could have signed is tried against each of them (jose leaves that to its caller).
 */
async function verifyAgainstKeys(token: string, keys: IssuerKeys, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, keys.keyFor, options)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const key of error) {
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

function refusalOf(error: unknown): IssuerRefusal {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return 'algorithm';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'issuer';
    if (error.claim === 'aud') return 'audience';
    if (error.claim === 'nbf') return 'not_yet_valid';
    if (error.claim === 'typ') return 'type';
    return 'claims';
  }
  if (error instanceof Error && error.name === 'KeysUnavailable') throw error; // a 503, not a refusal
  return 'signature';
}

/** The scopes the token holds: the first present claim's, a space-separated string or an array of strings. */
function scopesOf(payload: Readonly<Record<string, unknown>>, issuer: CompiledIssuer): string[] | undefined {
  for (const claim of issuer.scopeClaims) {
    const value = payload[claim];
    if (value === undefined) continue;
    const names = typeof value === 'string' ? value.split(' ').filter((s) => s !== '') : Array.isArray(value) && value.every((s) => typeof s === 'string') ? (value as string[]) : undefined;
    if (names === undefined) return undefined;
    return [...new Set(names.map((name) => issuer.scopeMap.get(name) ?? name).filter(isScopeName))].slice(0, 256);
  }
  return [];
}
