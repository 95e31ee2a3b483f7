/**
 * Scopes: what a credential may do. Their names are the operator's (the routes file's `scopes`,
 * route-table/), besides the built-in `keys:read` and `keys:write` of the gateway's own key and
 * session routes. Two things carry them:
 * - a ScopeTable, compiled with each route table: the declared names in order (the order every
 *   answer and header lists them in), their descriptions, and a bit for each, so the hot path
 *   checks a route's scope with one AND (a ScopeRule: word and mask);
 * - a ScopeGrant, what one credential holds: every scope, present and future (a login token, or
 *   an API key created without `scopes`), or the names it was given. Grants hold names, never
 *   positions, so editing the file never changes what a key holds; a grant's bits are compiled
 *   against a table on first use and kept until another table asks, and a name the table no
 *   longer declares simply holds nothing.
 */

/** The gateway's own scopes, declared by every table after the file's. */
export const BUILTIN_SCOPES = ['keys:read', 'keys:write'] as const;

/** `resource:action`: lower-case letters, digits, `_` and `-`, one or more `resource` parts separated by `.`. */
export const SCOPE_NAME_PATTERN = '^[a-z][a-z0-9_-]*(\\.[a-z][a-z0-9_-]*)*:[a-z][a-z0-9_-]*$';
const SCOPE_NAME = new RegExp(SCOPE_NAME_PATTERN);
export const MAX_SCOPE_NAME_LENGTH = 64;

export function isScopeName(name: string): boolean {
  return name.length <= MAX_SCOPE_NAME_LENGTH && SCOPE_NAME.test(name);
}

/** The scope a route's method needs, compiled against its table: held when `bits[word] & mask`. */
export type ScopeRule = Readonly<{ name: string; table: ScopeTable; word: number; mask: number }>;

export class ScopeTable {
  /** Declared names, the file's in its order, then the built-in ones. */
  readonly names: readonly string[];
  readonly descriptions: ReadonlyMap<string, string>;
  /** `x-organization-scopes` of a credential holding every scope: made once. */
  readonly allHeader: string;
  private readonly rules: ReadonlyMap<string, ScopeRule>;

  /** `declared`: the file's scopes with their descriptions (built-in names among them are refused by the compiler first). */
  constructor(declared: ReadonlyMap<string, string>) {
    const descriptions = new Map(declared);
    descriptions.set('keys:read', descriptions.get('keys:read') ?? 'List and read API keys and login sessions');
    descriptions.set('keys:write', descriptions.get('keys:write') ?? 'Change and revoke API keys and end login sessions');
    this.names = [...declared.keys(), ...BUILTIN_SCOPES.filter((name) => !declared.has(name))];
    this.descriptions = descriptions;
    this.allHeader = this.names.join(' ');
    this.rules = new Map(this.names.map((name, i) => [name, { name, table: this, word: i >>> 5, mask: 1 << (i & 31) }]));
  }

  has(name: string): boolean {
    return this.rules.has(name);
  }

  /** The rule of a declared scope (the compiler checks the name first). */
  rule(name: string): ScopeRule {
    const rule = this.rules.get(name);
    if (rule === undefined) throw new Error(`scope ${name} is not declared`);
    return rule;
  }

  /** The names this table declares, of those given, in table order. */
  declaredOf(names: readonly string[]): string[] {
    const given = new Set(names);
    return this.names.filter((name) => given.has(name));
  }

  /** The words of a set of names (undeclared ones hold nothing). */
  bitsOf(names: readonly string[]): Int32Array {
    const bits = new Int32Array((this.names.length + 31) >>> 5);
    for (const name of names) {
      const rule = this.rules.get(name);
      if (rule !== undefined) bits[rule.word]! |= rule.mask;
    }
    return bits;
  }
}

export class ScopeGrant {
  /** null: every scope, present and future. Otherwise sorted, without duplicates. */
  readonly names: readonly string[] | null;
  private table: ScopeTable | undefined;
  private bits: Int32Array = new Int32Array(0);
  private header = '';

  constructor(names: readonly string[] | null) {
    this.names = names === null ? null : [...new Set(names)].sort();
  }

  get all(): boolean {
    return this.names === null;
  }

  /** Whether the grant holds the rule's scope: one comparison and one AND once compiled against the rule's table. */
  holds(rule: ScopeRule): boolean {
    if (this.names === null) return true;
    if (this.table !== rule.table) this.compile(rule.table);
    return (this.bits[rule.word]! & rule.mask) !== 0;
  }

  /** The `x-organization-scopes` value under a table: the held declared names in table order, space-separated. */
  headerIn(table: ScopeTable): string {
    if (this.names === null) return table.allHeader;
    if (this.table !== table) this.compile(table);
    return this.header;
  }

  /** The declared names held under a table, in table order. */
  namesIn(table: ScopeTable): string[] {
    return this.names === null ? [...table.names] : table.declaredOf(this.names);
  }

  /** Whether the grant holds a scope by name (the gateway's own routes: not the hot path). */
  holdsName(name: string): boolean {
    return this.names === null || this.names.includes(name);
  }

  /** Whether every name of `narrower` is held here (by name: a grant of every scope holds all). */
  covers(narrower: readonly string[]): boolean {
    if (this.names === null) return true;
    const held = new Set(this.names);
    return narrower.every((name) => held.has(name));
  }

  private compile(table: ScopeTable): void {
    this.bits = table.bitsOf(this.names!);
    this.header = table.declaredOf(this.names!).join(' ');
    this.table = table;
  }
}

/** Every scope: a login token's, and an API key's created without `scopes`. */
export const ALL_SCOPES_GRANT = new ScopeGrant(null);

/**
 * Grants are shared between credentials holding the same names (interned), so each set of names
 * compiles once per table. Bounded: past the bound a grant is made per credential.
 */
const interned = new Map<string, ScopeGrant>();
const MAX_INTERNED = 10_000;

/** The grant of a key's stored scopes: undefined (no list) is every scope. */
export function grantOf(names: readonly string[] | undefined): ScopeGrant {
  if (names === undefined) return ALL_SCOPES_GRANT;
  const key = [...new Set(names)].sort().join(' ');
  let grant = interned.get(key);
  if (grant === undefined) {
    grant = new ScopeGrant(names);
    if (interned.size < MAX_INTERNED) interned.set(key, grant);
  }
  return grant;
}

/**
 * The five scopes before they were the operator's, in the order whose positions numbered the bits
 * keys were stored with (a number, bit i = LEGACY_SCOPES[i]); read back by name. Never reorder.
 */
export const LEGACY_SCOPES = ['accounts:read', 'accounts:write', 'organization:read', 'keys:read', 'keys:write'] as const;

/** The names of a legacy bit set. */
export function namesOfLegacySet(set: number): string[] {
  return LEGACY_SCOPES.filter((_scope, i) => (set & (1 << i)) !== 0);
}
