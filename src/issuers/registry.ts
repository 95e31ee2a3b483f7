/**
 * The trusted issuers of the live route table with their followed key sets (keys.ts), or, for an
 * issuer of opaque tokens, its introspection client (introspect.ts): one of them per issuer, started when the table that declares it is (in the background: nothing waits on
 * it), kept across a reload that leaves the issuer as it was, closed when a reload drops or
 * changes it. Looked up by the token's `iss`, which is unique per file (compile.ts).
 */
import type { JWTVerifyOptions } from 'jose';
import type { LiveRouteTable } from '../route-table/live.js';
import type { RouteTable } from '../route-table/types.js';
import { createIntrospector, type IntrospectionResult, type Introspector } from './introspect.js';
import { createIssuerKeys, type FetchResult, type IssuerKeys } from './keys.js';
import type { CompiledIssuer } from './types.js';
import { verifyOptions } from './verify.js';

/** An issuer whose JWTs are checked against its keys, or whose opaque tokens are introspected. */
export type TrustedIssuer = KeyedIssuer | IntrospectedIssuer;
export type KeyedIssuer = Readonly<{ issuer: CompiledIssuer; keys: IssuerKeys; options: JWTVerifyOptions; introspector?: undefined }>;
export type IntrospectedIssuer = Readonly<{ issuer: CompiledIssuer; introspector: Introspector; keys?: undefined }>;

export type IssuerRegistry = Readonly<{
  /** The issuer whose `iss` this is, in the live table; undefined for any other. */
  byIss(iss: string): KeyedIssuer | undefined;
  /** The issuer of this name in the live table when its opaque tokens are introspected; undefined otherwise. */
  introspected(name: string): IntrospectedIssuer | undefined;
  /** Whether the live table declares any issuer (none: no token is ever looked at for one). */
  any(): boolean;
  close(): void;
}>;

export type IssuerObserver = Readonly<{
  onFetch(issuer: string, result: FetchResult): void;
  onKeys(issuer: string, count: number): void;
  onIntrospection(issuer: string, result: IntrospectionResult): void;
}>;

export function createIssuerRegistry(routes: LiveRouteTable, observer: IssuerObserver, now: () => number): IssuerRegistry {
  let byIss = new Map<string, KeyedIssuer>();
  let introspecting = new Map<string, IntrospectedIssuer>();
  /** By the issuer's compiled form, as JSON: an unchanged issuer keeps its keys over a reload. */
  let bySpec = new Map<string, TrustedIssuer>();

  function follow(table: RouteTable): void {
    const nextByIss = new Map<string, KeyedIssuer>();
    const nextBySpec = new Map<string, TrustedIssuer>();
    const nextIntrospecting = new Map<string, IntrospectedIssuer>();
    for (const issuer of table.issuers.values()) {
      // The client secret serialises as its digest (secret.ts): a rotated one is a changed issuer.
      const spec = JSON.stringify({ ...issuer, scopeMap: [...issuer.scopeMap] });
      const trusted = bySpec.get(spec) ?? start(issuer);
      nextBySpec.set(spec, trusted);
      if (trusted.introspector !== undefined) nextIntrospecting.set(issuer.name, trusted);
      else nextByIss.set(issuer.issuer, trusted);
    }
    for (const [spec, trusted] of bySpec) if (!nextBySpec.has(spec)) stop(trusted);
    byIss = nextByIss;
    bySpec = nextBySpec;
    introspecting = nextIntrospecting;
  }

  function start(issuer: CompiledIssuer): TrustedIssuer {
    if (issuer.introspection !== undefined) return { issuer, introspector: createIntrospector(issuer, { now, onCall: (result) => observer.onIntrospection(issuer.name, result) }) };
    const keys = createIssuerKeys(issuer, { now, onFetch: (result) => observer.onFetch(issuer.name, result), onKeys: (count) => observer.onKeys(issuer.name, count) });
    keys.start();
    return { issuer, keys, options: verifyOptions(issuer) };
  }

  function stop(trusted: TrustedIssuer): void {
    if (trusted.introspector !== undefined) trusted.introspector.close();
    else trusted.keys.close();
  }

  follow(routes.current());
  routes.onSwap((table) => follow(table));
  return {
    byIss: (iss) => byIss.get(iss),
    introspected: (name) => introspecting.get(name),
    any: () => byIss.size > 0 || introspecting.size > 0,
    close() {
      for (const trusted of bySpec.values()) stop(trusted);
    },
  };
}
