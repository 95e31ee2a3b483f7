/**
 * The routes file's plans (issue 47) compiled against the table's scopes: what an organization on
 * each may hold, as bits in the same ScopeTable the routes' rules use, so the request paths check
 * a plan with the same one AND as a credential's grant. The gateway's own keys:read and
 * keys:write are in every plan: they guard the key routes every organization needs.
 */
import { BUILTIN_SCOPES, type ScopeRule, type ScopeTable } from '../authz/scopes.js';
import { parseRateLimit, RATE_LIMIT_FORM } from '../limits/rate-limit.js';
import type { CompiledPlan, RouteFileError, RoutesFile } from './types.js';

export type CompiledPlans = Readonly<{ plans: ReadonlyMap<string, CompiledPlan>; defaultPlan: CompiledPlan | undefined }>;

export function compilePlans(file: RoutesFile, scopes: ScopeTable, fail: (pointer: string, message: string) => void): CompiledPlans {
  const plans = new Map<string, CompiledPlan>();
  for (const [name, spec] of Object.entries(file.plans ?? {})) {
    const at = `/plans/${escape(name)}`;
    let failed = false;
    const wanted = spec.scopes === 'all' ? [...scopes.names] : [...spec.scopes];
    if (spec.scopes !== 'all') {
      spec.scopes.forEach((scope, i) => {
        if (!scopes.has(scope)) {
          fail(`${at}/scopes/${i}`, `scope ${scope} is not declared under scopes`);
          failed = true;
        }
      });
    }
    let rateLimit;
    if (spec.rateLimit !== undefined) {
      rateLimit = parseRateLimit(spec.rateLimit);
      if (rateLimit === undefined) {
        fail(`${at}/rateLimit`, `"${spec.rateLimit}" is not ${RATE_LIMIT_FORM}`);
        failed = true;
      }
    }
    if (failed) continue;
    const scopeNames = scopes.declaredOf([...wanted, ...BUILTIN_SCOPES]);
    plans.set(name, {
      name,
      description: spec.description,
      scopeNames,
      all: spec.scopes === 'all',
      bits: scopes.bitsOf(scopeNames),
      rateLimit,
      quota: spec.quota,
      maxKeys: spec.maxKeys,
    });
  }
  let defaultPlan: CompiledPlan | undefined;
  if (file.defaultPlan !== undefined) {
    defaultPlan = plans.get(file.defaultPlan);
    if (defaultPlan === undefined && !Object.hasOwn(file.plans ?? {}, file.defaultPlan)) {
      fail('/defaultPlan', `plan ${file.defaultPlan} is not declared under plans`);
    }
  }
  return { plans, defaultPlan };
}

/** Whether a plan allows a route's scope: one AND, as ScopeGrant.holds. No plan: every scope. */
export function planAllows(plan: CompiledPlan | undefined, rule: ScopeRule): boolean {
  return plan === undefined || (plan.bits[rule.word]! & rule.mask) !== 0;
}

/** Whether a plan allows a scope by name (the gateway's own routes and key writes: not the hot path). */
export function planAllowsName(plan: CompiledPlan | undefined, name: string): boolean {
  return plan === undefined || (BUILTIN_SCOPES as readonly string[]).includes(name) || plan.scopeNames.includes(name);
}

/** The names a plan does not include (built-in ones are in every plan); none without a plan. */
export function scopesOutsidePlan(names: readonly string[], plan: CompiledPlan | undefined): string[] {
  if (plan === undefined) return [];
  return [...new Set(names)].filter((name) => !planAllowsName(plan, name));
}

function escape(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
