/**
 * A routes file's `issuers:` (through the schema already) compiled for the table, or the reasons
 * it cannot be, each placed by JSON pointer like the rest of the file (route-table/compile.ts).
 */
import type { ScopeTable } from '../authz/scopes.js';
import type { RouteFileError } from '../route-table/types.js';
import { readClientSecret } from './secret.js';
import { DEFAULT_CLOCK_SKEW_SECONDS, INTROSPECTION_DEFAULTS, ISSUER_KEY_DEFAULTS, type CompiledIntrospection, type CompiledIssuer, type IssuerSpec } from './types.js';

/** Where a key set may be fetched over plain http: this machine only (tests, a sidecar). */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const DEFAULT_SCOPE_CLAIMS = ['scope', 'scp'] as const;

export function compileIssuers(
  specs: Readonly<Record<string, IssuerSpec>> | undefined,
  scopes: ScopeTable,
  fail: (pointer: string, message: string) => void,
  /** The routes file's path: a relative clientSecretFile is read beside it. */
  source?: string,
): Map<string, CompiledIssuer> {
  const compiled = new Map<string, CompiledIssuer>();
  const byIss = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs ?? {})) {
    const at = `/issuers/${name}`; // names are [a-z0-9_-]: nothing to escape
    const before = { count: 0 };
    const problem = (pointer: string, message: string) => {
      before.count++;
      fail(pointer, message);
    };
    const issuerProblem = urlProblem(spec.issuer);
    if (issuerProblem !== undefined) problem(`${at}/issuer`, issuerProblem);
    if (spec.jwksUri !== undefined) {
      const jwksProblem = urlProblem(spec.jwksUri);
      if (jwksProblem !== undefined) problem(`${at}/jwksUri`, jwksProblem);
    }
    let introspection: CompiledIntrospection | undefined;
    if (spec.introspection !== undefined) {
      introspection = compileIntrospection(spec, at, problem, source);
    } else {
      const other = byIss.get(spec.issuer);
      // A JWT's `iss` picks the issuer (verify.ts): two entries for one `iss` would be one half applied.
      if (other !== undefined) problem(`${at}/issuer`, `issuer ${spec.issuer} is also issuers.${other}'s`);
      else byIss.set(spec.issuer, name);
    }
    for (const [from, to] of Object.entries(spec.scopeMap ?? {})) {
      if (!scopes.has(to)) problem(`${at}/scopeMap/${from.replace(/~/g, '~0').replace(/\//g, '~1')}`, `scope ${to} is not declared under scopes`);
    }
    if (before.count > 0) continue;
    compiled.set(name, {
      name,
      issuer: spec.issuer,
      jwksUri: spec.jwksUri,
      audiences: spec.audiences,
      algorithms: spec.algorithms ?? ['RS256'],
      organization: spec.organization,
      scopeClaims: spec.scopes === undefined ? DEFAULT_SCOPE_CLAIMS : [spec.scopes.claim],
      requireType: spec.requireType,
      clockSkewSeconds: spec.clockSkewSeconds ?? DEFAULT_CLOCK_SKEW_SECONDS,
      scopeMap: new Map(Object.entries(spec.scopeMap ?? {})),
      keys: { ...ISSUER_KEY_DEFAULTS, ...spec.keys },
      introspection,
    });
  }
  return compiled;
}

/** An issuer's `introspection:`, its secret read now; undefined with its problems told. */
function compileIntrospection(spec: IssuerSpec, at: string, problem: (pointer: string, message: string) => void, source: string | undefined): CompiledIntrospection | undefined {
  const introspection = spec.introspection!;
  // A key set's settings on an introspected issuer would be read as a promise the gateway does not keep.
  for (const field of ['jwksUri', 'algorithms', 'requireType', 'keys'] as const) {
    if (spec[field] !== undefined) problem(`${at}/${field}`, 'an issuer with introspection has no key set: its tokens are checked at the endpoint');
  }
  const urlWrong = urlProblem(introspection.url);
  if (urlWrong !== undefined) problem(`${at}/introspection/url`, urlWrong);
  const secret = readClientSecret(introspection.clientSecretFile, source);
  if (typeof secret === 'string') problem(`${at}/introspection/clientSecretFile`, secret);
  if (urlWrong !== undefined || typeof secret === 'string') return undefined;
  return {
    url: introspection.url,
    clientId: introspection.clientId,
    clientSecret: secret,
    cacheSeconds: introspection.cacheSeconds ?? INTROSPECTION_DEFAULTS.cacheSeconds,
    inactiveCacheSeconds: introspection.inactiveCacheSeconds ?? INTROSPECTION_DEFAULTS.inactiveCacheSeconds,
    timeoutSeconds: introspection.timeoutSeconds ?? INTROSPECTION_DEFAULTS.timeoutSeconds,
  };
}

/**
 * Why a route's credentials cannot be: an opaque token names no issuer, so the route names the one
 * endpoint it is sent to; with two, a token would be tried at one provider after another.
 */
export function routeIntrospectionProblem(issuerNames: readonly string[], specs: Readonly<Record<string, IssuerSpec>> | undefined): string | undefined {
  const introspected = issuerNames.filter((name) => specs?.[name]?.introspection !== undefined);
  return introspected.length > 1 ? `a route takes at most one issuer with introspection (an opaque token names no issuer): ${introspected.join(', ')}` : undefined;
}

/** Why a provider URL is not one: https, or http on loopback only; never credentials or a fragment. */
function urlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') return 'must be a URL without credentials or fragment';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return undefined;
  return 'must be https (http only on localhost)';
}
