/**
 * Trusted issuers (issue 49): identity providers whose access tokens a route may take as a
 * credential (`credentials: [issuer:NAME]`): JWTs checked against its keys, or opaque tokens
 * introspected. Two forms, as for routes (route-table/types.ts): the file's (IssuerSpec, under
 * `issuers:` in the routes file) and the compiled one (CompiledIssuer), immutable, that the key
 * sets (keys.ts), the verifier (verify.ts) and the introspection client (introspect.ts) read.
 */
import type { ClientSecret } from './secret.js';

/** The signing algorithms an issuer may allow: asymmetric only, so never `none` and never HS* (a key set holds public keys). */
export const ISSUER_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
export type IssuerAlgorithm = (typeof ISSUER_ALGORITHMS)[number];

/** How the keys are followed; every bound has a default (keys.ts) and the file may shorten or lengthen it. */
export type IssuerKeysSpec = Readonly<{
  /** Background refresh of a key set that is held, s. */
  refreshSeconds?: number;
  /** Least time between two fetches (an unknown `kid`, a failed fetch), s. */
  cooldownSeconds?: number;
  /** How long after its last good fetch a key set is still used while the provider does not answer, s. */
  maxStaleSeconds?: number;
  /** Each fetch's bound, s. */
  timeoutSeconds?: number;
}>;

export type IssuerSpec = Readonly<{
  /** The `iss` its tokens carry, exactly; discovery at `<issuer>/.well-known/openid-configuration` unless jwksUri is given. */
  issuer: string;
  jwksUri?: string;
  /** Any one of them must be in the token's `aud`. */
  audiences: readonly string[];
  /** Allow-list; [RS256] unless set. */
  algorithms?: readonly IssuerAlgorithm[];
  /** The claim whose value is the organization's external id at this issuer, or one organization for every token. */
  organization: Readonly<{ claim: string }> | Readonly<{ fixed: string }>;
  /** The claim holding the token's scopes (space-separated string or array); `scope`, then `scp`, unless set. */
  scopes?: Readonly<{ claim: string }>;
  /** The JWT `typ` the token must have (RFC 9068: at+jwt), compared without an `application/` prefix and case. */
  requireType?: string;
  clockSkewSeconds?: number;
  /** The token's scope names renamed to the table's (a name not listed stays as it is). */
  scopeMap?: Readonly<Record<string, string>>;
  keys?: IssuerKeysSpec;
  /** Opaque tokens checked at the provider's RFC 7662 endpoint instead of JWTs against its keys. */
  introspection?: IntrospectionSpec;
}>;

/** RFC 7662 token introspection (introspect.ts): where, as which client, and how long an answer is kept. */
export type IntrospectionSpec = Readonly<{
  /** The introspection endpoint (https; http only on loopback). */
  url: string;
  /** The client authgate authenticates as (client_secret_basic). */
  clientId: string;
  /** The file holding its secret; relative to the routes file. Read at load and at each reload. */
  clientSecretFile: string;
  /** Longest an `active: true` answer is reused (never past the token's `exp`), s. */
  cacheSeconds?: number;
  /** How long an `active: false` answer is reused, s. */
  inactiveCacheSeconds?: number;
  /** Each call's bound, s. */
  timeoutSeconds?: number;
}>;

export type CompiledIntrospection = Readonly<{
  url: string;
  clientId: string;
  clientSecret: ClientSecret;
  cacheSeconds: number;
  inactiveCacheSeconds: number;
  timeoutSeconds: number;
}>;

export type CompiledIssuer = Readonly<{
  /** The file's name for it: the route's `issuer:NAME`, the metrics' `issuer` label, the assertion's. */
  name: string;
  issuer: string;
  /** Undefined: found by discovery. */
  jwksUri: string | undefined;
  audiences: readonly string[];
  algorithms: readonly IssuerAlgorithm[];
  organization: Readonly<{ claim: string }> | Readonly<{ fixed: string }>;
  /** The claims read for scopes, in order: the first present one is taken. */
  scopeClaims: readonly string[];
  requireType: string | undefined;
  clockSkewSeconds: number;
  scopeMap: ReadonlyMap<string, string>;
  keys: Readonly<Required<IssuerKeysSpec>>;
  /** Set: the issuer's tokens are opaque and introspected; it has no key set. */
  introspection: CompiledIntrospection | undefined;
}>;

/** The defaults of the key bounds (docs/issuers.md states them). */
export const ISSUER_KEY_DEFAULTS: Readonly<Required<IssuerKeysSpec>> = {
  refreshSeconds: 600,
  cooldownSeconds: 30,
  maxStaleSeconds: 3600,
  timeoutSeconds: 5,
};
export const DEFAULT_CLOCK_SKEW_SECONDS = 60;

/** The defaults of the introspection bounds (docs/issuers.md states them). */
export const INTROSPECTION_DEFAULTS = {
  cacheSeconds: 60,
  inactiveCacheSeconds: 5,
  timeoutSeconds: 5,
} as const;
