/**
 * SPEED TRICK `kept-allows` (issue 30; speed-tricks.ts lists them all): the last allow of each
 * credential, kept, so that the decider (decider-outcomes.ts) answers the same EdgeAllow object again
 * while the route table, the route, the organization's plan and the identity assertion are the
 * same. The port then finds that object's answer and header block made (answers.ts,
 * answer-heads.ts: `header-blocks`) and writes the kept bytes (fast-front.ts).
 *
 * Why: making the allow's headers (the effective scopes, the identity list to remove), its answer
 * and its head per request was most of a warm decision's own cost. What it bought, with
 * `header-blocks`: CPU per decision ×0.79 (API key) and ×0.75 (JWT), geometric means of five
 * runs both ways round (docs/performance.md, "Issue 30: the authorization port's answer").
 *
 * Kept weakly by the cached Principal: a credential dropped from the resolver's cache takes its
 * allow with it, and a revoked one is never found (its Principal is never resolved again). An
 * allow under a counted limit is never kept (the decider says which are keepable).
 *
 * Off: AUTHGATE_AUTHZ_SPEED_TRICKS_OFF=kept-allows: nothing is kept, every decision makes its
 * allow anew (test/edge-authz/speed-tricks.test.ts: the same answers either way).
 */
import type { Principal } from '../credentials/principal.js';
import type { CompiledPlan, CompiledRoute, RouteTable } from '../route-table/types.js';
import type { EdgeAllow } from './decision.js';

export type KeptAllows = Readonly<{
  /** The kept allow of `principal` if it was made for the same table, route, plan and assertion. */
  get(principal: Principal, table: RouteTable, route: CompiledRoute, plan: CompiledPlan | undefined, assertion: string | null): EdgeAllow | undefined;
  keep(principal: Principal, table: RouteTable, route: CompiledRoute, plan: CompiledPlan | undefined, assertion: string | null, decision: EdgeAllow): void;
}>;

type Kept = { table: RouteTable; route: CompiledRoute; plan: CompiledPlan | undefined; assertion: string | null; decision: EdgeAllow };

const NONE_KEPT: KeptAllows = Object.freeze({ get: () => undefined, keep: () => undefined });

/** `on`: SpeedTricks.keptAllows; off, nothing is ever kept. */
export function createKeptAllows(on: boolean): KeptAllows {
  if (!on) return NONE_KEPT;
  const kept = new WeakMap<Principal, Kept>();
  return {
    get(principal, table, route, plan, assertion) {
      const last = kept.get(principal);
      return last !== undefined && last.assertion === assertion && last.route === route && last.table === table && last.plan === plan ? last.decision : undefined;
    },
    keep(principal, table, route, plan, assertion, decision) {
      kept.set(principal, { table, route, plan, assertion, decision });
    },
  };
}
