/**
 * The trusted issuers of the live route table with their followed key sets (keys.ts): one key set
 * per issuer, started when the table that declares it is (in the background: nothing waits on
 * it), kept across a reload that leaves the issuer as it was, closed when a reload drops or
 * changes it. Looked up by the token's `iss`, which is unique per file (compile.ts).
 */
import type { JWTVerifyOptions } from 'jose';
import type { LiveRouteTable } from '../route-table/live.js';
import type { RouteTable } from '../route-table/types.js';
import { createIssuerKeys, type FetchResult, type IssuerKeys } from './keys.js';
import type { CompiledIssuer } from './types.js';
import { verifyOptions } from './verify.js';

export type TrustedIssuer = Readonly<{ issuer: CompiledIssuer; keys: IssuerKeys; options: JWTVerifyOptions }>;

export type IssuerRegistry = Readonly<{
  /** The issuer whose `iss` this is, in the live table; undefined for any other. */
  byIss(iss: string): TrustedIssuer | undefined;
  /** Whether the live table declares any issuer (none: no token is ever looked at for one). */
  any(): boolean;
  close(): void;
}>;

export type IssuerObserver = Readonly<{
  onFetch(issuer: string, result: FetchResult): void;
  onKeys(issuer: string, count: number): void;
}>;

export function createIssuerRegistry(routes: LiveRouteTable, observer: IssuerObserver, now: () => number): IssuerRegistry {
  let byIss = new Map<string, TrustedIssuer>();
  /** By the issuer's compiled form, as JSON: an unchanged issuer keeps its keys over a reload. */
  let bySpec = new Map<string, TrustedIssuer>();

  function follow(table: RouteTable): void {
    const nextByIss = new Map<string, TrustedIssuer>();
    const nextBySpec = new Map<string, TrustedIssuer>();
    for (const issuer of table.issuers.values()) {
      const spec = JSON.stringify({ ...issuer, scopeMap: [...issuer.scopeMap] });
      let trusted = bySpec.get(spec);
      if (trusted === undefined) {
        const keys = createIssuerKeys(issuer, { now, onFetch: (result) => observer.onFetch(issuer.name, result), onKeys: (count) => observer.onKeys(issuer.name, count) });
        trusted = { issuer, keys, options: verifyOptions(issuer) };
        keys.start();
      }
      nextBySpec.set(spec, trusted);
      nextByIss.set(issuer.issuer, trusted);
    }
    for (const [spec, trusted] of bySpec) if (!nextBySpec.has(spec)) trusted.keys.close();
    byIss = nextByIss;
    bySpec = nextBySpec;
  }

  follow(routes.current());
  routes.onSwap((table) => follow(table));
  return {
    byIss: (iss) => byIss.get(iss),
    any: () => byIss.size > 0,
    close() {
      for (const trusted of bySpec.values()) trusted.keys.close();
    },
  };
}
