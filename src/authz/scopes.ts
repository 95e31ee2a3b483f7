/**
 * The closed set of scopes a credential may hold, and the one way they are carried: a bit set
 * (a number, bit i = SCOPES[i]), so the hot path checks a route's scope with one AND and the
 * stores keep a key's scopes in one character. A login token holds every scope; an API key
 * holds every scope unless it was given fewer.
 *
 * The set is a public contract (README "Scopes"): a scope is never renamed or renumbered; a new
 * one is added at the end. A key created without `scopes` (ALL_SCOPES, stored as "no list")
 * holds every scope the gateway defines, new ones included, as Stripe's standard keys do; a key
 * given a list holds exactly that list.
 */
export const SCOPES = ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** A set of scopes: bit i stands for SCOPES[i]. */
export type ScopeSet = number;

export const ALL_SCOPES: ScopeSet = (1 << SCOPES.length) - 1;

const BITS = new Map<string, number>(SCOPES.map((scope, i) => [scope, 1 << i]));

export function scopeBit(scope: Scope): ScopeSet {
  return BITS.get(scope)!;
}

/** The set of the named scopes (each name must be a Scope: the schemas check that first). */
export function scopeSetOf(scopes: readonly Scope[]): ScopeSet {
  let set = 0;
  for (const scope of scopes) set |= scopeBit(scope);
  return set;
}

/** The scopes of a set, in SCOPES order (the order every answer and header lists them in). */
export function scopesIn(set: ScopeSet): Scope[] {
  return SCOPES.filter((_scope, i) => (set & (1 << i)) !== 0);
}

/** Whether `narrower` holds nothing `wider` does not. */
export function isSubset(narrower: ScopeSet, wider: ScopeSet): boolean {
  return (narrower & ~wider) === 0;
}

/**
 * The `x-organization-scopes` value of each set, space-separated as OAuth writes scopes: made
 * once per set (there are 32), so forwarding a request costs no string building.
 */
const HEADER_VALUES: readonly string[] = Array.from({ length: ALL_SCOPES + 1 }, (_, set) => scopesIn(set).join(' '));

export function scopeHeaderValue(set: ScopeSet): string {
  return HEADER_VALUES[set & ALL_SCOPES]!;
}
