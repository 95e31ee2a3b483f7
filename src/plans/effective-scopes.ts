/**
 * A credential's effective scopes (issue 47): its own grant intersected with its organization's
 * plan, as the `x-organization-scopes` header and the identity assertion's `scope` claim say
 * them. The check itself is two ANDs (authz/authorize.ts, route-table/plans.ts planAllows); the
 * header, a string, is made once per (plan, grant) and kept with the plan, which a reload of the
 * file replaces (grants are interned: scopes.ts grantOf).
 */
import type { ScopeGrant, ScopeTable } from '../authz/scopes.js';
import type { CompiledPlan } from '../route-table/types.js';

const headers = new WeakMap<CompiledPlan, Map<ScopeGrant, string>>();
/** Distinct grants per plan kept: past it, the header is made per request (still right). */
const MAX_KEPT = 10_000;

/** The held scopes `table` declares, the plan's only (when there is one), in table order, space-separated. */
export function effectiveScopesHeader(grant: ScopeGrant, table: ScopeTable, plan: CompiledPlan | undefined): string {
  if (plan === undefined) return grant.headerIn(table);
  let kept = headers.get(plan);
  if (kept === undefined) headers.set(plan, (kept = new Map()));
  let header = kept.get(grant);
  if (header === undefined) {
    header = effectiveScopeNames(grant, table, plan).join(' ');
    if (kept.size < MAX_KEPT) kept.set(grant, header);
  }
  return header;
}

/** The same as names (GET /auth/scopes, key answers): the grant's declared names the plan allows. */
export function effectiveScopeNames(grant: ScopeGrant, table: ScopeTable, plan: CompiledPlan | undefined): string[] {
  const held = grant.namesIn(table);
  if (plan === undefined) return held;
  const allowed = new Set(plan.scopeNames);
  return held.filter((name) => allowed.has(name));
}
