/**
 * Members over real HTTP (issue 50) for the tests of each member's own password and second
 * factor: an organization created the old way (admin API), its owner's login, and members
 * invited by the owner and accepted (on either replica), on gateways from test/helpers/gateway.ts.
 */
import type { Test } from 'tap';
import { ADMIN_TOKEN, send, startGateway, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';
import { call } from '../helpers/second-factor.js';
import type { MemberRole } from '../../src/store/members.js';

export type StartedMember = { id: string; email: string; password: string; token: string };

/** One redis-server per test file: each test's organizations are its own. */
let redis: Promise<{ url: string; stop: () => Promise<void> }> | undefined;
export const stopSharedRedis = async () => (await redis)?.stop();

/** Two replicas (one gateway twice on the memory store) sharing `deps.now`, with `env`. */
export async function twoReplicas(t: Test, store: 'memory' | 'redis', now: () => number, env: Record<string, string> = {}): Promise<[StartedGateway, StartedGateway]> {
  const deps = { now };
  if (store === 'memory') {
    const gw = await startGateway(t, { env, deps });
    return [gw, gw];
  }
  redis ??= startRedis();
  const shared = { ...env, AUTHGATE_REDIS_URL: (await redis).url, AUTHGATE_REDIS_TIMEOUT_MS: '1000', AUTHGATE_MFA_ENCRYPTION_KEY: 'one key both replicas share, 32 bytes or more' };
  return [await startGateway(t, { env: shared, deps }), await startGateway(t, { env: shared, deps })];
}

let counter = 0;

/** Invites a member with `role` as `ownerToken` on `gw`, accepted on `acceptOn`. */
export async function invite(t: Test, gw: StartedGateway, ownerToken: string, role: MemberRole, acceptOn: StartedGateway = gw): Promise<StartedMember> {
  const email = `own-${++counter}-${process.pid}@example.test`;
  const invited = await call(gw, 'POST', '/auth/invitations', { email, role }, ownerToken);
  t.equal(invited.status, 201, `invited as ${role}`);
  const password = `member-own-password-${counter}-long`;
  const accepted = await call(acceptOn, 'POST', '/auth/invitations/accept', { token: (invited.json() as { token: string }).token, password });
  t.equal(accepted.status, 200, `accepted as ${role}`);
  const members = (await call(gw, 'GET', '/auth/members', undefined, ownerToken).then((r) => r.json())) as { members: Array<{ id: string; email: string }> };
  return { id: members.members.find((m) => m.email === email)!.id, email, password, token: (accepted.json() as { token: string }).token };
}

/** The admin API on the ops port. */
export function admin(gw: StartedGateway, method: string, path: string): Promise<Response> {
  return send(`${gw.opsUrl}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
}

/** POST /auth/login: its status and, for 403 1116, the mfaToken. */
export async function loginStep(gw: StartedGateway, who: { email: string; password: string }): Promise<{ status: number; code?: number; token?: string; mfaToken?: string; body: Record<string, unknown> }> {
  const res = await call(gw, 'POST', '/auth/login', { email: who.email, password: who.password });
  const body = res.json() as Record<string, unknown>;
  return { status: res.status, body, ...(typeof body.code === 'number' && { code: body.code }), ...(typeof body.token === 'string' && { token: body.token }), ...(typeof body.mfaToken === 'string' && { mfaToken: body.mfaToken }) };
}
