import t, { type Test } from 'tap';
import { injectGateway, type InjectedGateway } from '../helpers/inject.js';
import { startRedis } from '../helpers/redis.js';
import { bearer, team } from './helpers.js';

/**
 * The role matrix (issue 50): each role against each management route of the organization,
 * allowed or 403 memberRoleForbidden (1124), on the memory store and on Redis.
 */

type Role = 'owner' | 'admin' | 'developer' | 'viewer';
const ALL: Role[] = ['owner', 'admin', 'developer', 'viewer'];

async function matrix(t: Test, gw: InjectedGateway) {
  const { tokens } = await team(t, gw);
  const ownerKey = await gw.createApiKey(tokens.owner);
  const fresh = async () => (await gw.createApiKey(tokens.owner)).id;
  type Case = { name: string; allowed: Role[]; ask: (token: string) => Promise<{ statusCode: number; body: string }> };
  const cases: Case[] = [
    { name: 'GET /auth/api-key', allowed: ALL, ask: (tk) => gw.pub({ url: '/auth/api-key', headers: bearer(tk) }) },
    { name: 'GET /auth/api-key/:id', allowed: ALL, ask: (tk) => gw.pub({ url: `/auth/api-key/${ownerKey.id}`, headers: bearer(tk) }) },
    { name: 'POST /auth/api-key', allowed: ['owner', 'admin', 'developer'], ask: (tk) => gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(tk) }) },
    { name: "PATCH /auth/api-key/:id (the owner's key)", allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ method: 'PATCH', url: `/auth/api-key/${ownerKey.id}`, headers: bearer(tk), payload: { name: 'renamed' } }) },
    { name: "POST /auth/api-key/:id/roll (the owner's key)", allowed: ['owner', 'admin'], ask: async (tk) => gw.pub({ method: 'POST', url: `/auth/api-key/${await fresh()}/roll`, headers: bearer(tk), payload: { graceSeconds: 0 } }) },
    { name: "DELETE /auth/api-key/:id (the owner's key)", allowed: ['owner', 'admin'], ask: async (tk) => gw.pub({ method: 'DELETE', url: `/auth/api-key/${await fresh()}`, headers: bearer(tk) }) },
    { name: 'GET /auth/sessions', allowed: ALL, ask: (tk) => gw.pub({ url: '/auth/sessions', headers: bearer(tk) }) },
    { name: 'DELETE /auth/sessions/:id', allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ method: 'DELETE', url: '/auth/sessions/ses_unknown', headers: bearer(tk) }) },
    { name: 'GET /auth/audit', allowed: ALL, ask: (tk) => gw.pub({ url: '/auth/audit', headers: bearer(tk) }) },
    { name: 'GET /auth/organization', allowed: ALL, ask: (tk) => gw.pub({ url: '/auth/organization', headers: bearer(tk) }) },
    { name: 'PATCH /auth/organization', allowed: ['owner'], ask: (tk) => gw.pub({ method: 'PATCH', url: '/auth/organization', headers: bearer(tk), payload: { name: 'Renamed' } }) },
    { name: 'GET /auth/members', allowed: ALL, ask: (tk) => gw.pub({ url: '/auth/members', headers: bearer(tk) }) },
    { name: 'PATCH /auth/members/:id', allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ method: 'PATCH', url: '/auth/members/mem_unknown', headers: bearer(tk), payload: { role: 'viewer' } }) },
    { name: 'DELETE /auth/members/:id', allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ method: 'DELETE', url: '/auth/members/mem_unknown', headers: bearer(tk) }) },
    { name: 'POST /auth/invitations', allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ method: 'POST', url: '/auth/invitations', headers: bearer(tk), payload: { email: `x-${Math.random()}@example.test`, role: 'viewer' } }) },
    { name: 'GET /auth/invitations', allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ url: '/auth/invitations', headers: bearer(tk) }) },
    { name: 'DELETE /auth/invitations/:id', allowed: ['owner', 'admin'], ask: (tk) => gw.pub({ method: 'DELETE', url: '/auth/invitations/inv_unknown', headers: bearer(tk) }) },
    // Every member changes its own password (the first member's is the organization's): no role needed.
    { name: 'POST /auth/password', allowed: ALL, ask: (tk) => gw.pub({ method: 'POST', url: '/auth/password', headers: bearer(tk), payload: { currentPassword: 'wrong-password-here', newPassword: 'another-password-long-enough' } }) },
  ];
  for (const c of cases) {
    for (const role of ALL) {
      const res = await c.ask(tokens[role]);
      const code = res.statusCode === 403 ? (JSON.parse(res.body) as { code?: number }).code : undefined;
      if (c.allowed.includes(role)) t.not(code, 1124, `${c.name}: ${role} allowed (${res.statusCode})`);
      else {
        t.equal(res.statusCode, 403, `${c.name}: ${role} refused`);
        t.equal(code, 1124, `${c.name}: ${role} refused with memberRoleForbidden`);
        t.match(res.body, new RegExp(`role ${role}`), 'the refusal names the role');
      }
      t.not(res.statusCode, 500);
    }
  }
  // Refusals only, for what would end everyone's sessions.
  for (const role of ['developer', 'viewer'] as const) {
    t.equal((await gw.pub({ method: 'DELETE', url: '/auth/sessions', headers: bearer(tokens[role]) })).statusCode, 403, `DELETE /auth/sessions: ${role} refused`);
    t.equal((await gw.pub({ method: 'POST', url: '/auth/logout', headers: bearer(tokens[role]), payload: { everywhere: true } })).statusCode, 403, `logout everywhere: ${role} refused`);
  }

  // A developer manages the keys it created, and no other.
  const own = await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(tokens.developer) });
  const ownId = own.json<{ id: string }>().id;
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/api-key/${ownId}`, headers: bearer(tokens.developer), payload: { name: 'mine' } })).statusCode, 200, 'a developer changes its own key');
  const rolled = await gw.pub({ method: 'POST', url: `/auth/api-key/${ownId}/roll`, headers: bearer(tokens.developer), payload: { graceSeconds: 0 } });
  t.equal(rolled.statusCode, 201, 'and rolls it');
  const successor = rolled.json<{ id: string }>().id;
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${successor}`, headers: bearer(tokens.developer) })).statusCode, 204, 'and deletes its successor');
  const adminKey = (await gw.pub({ method: 'POST', url: '/auth/api-key', headers: bearer(tokens.admin) })).json<{ id: string }>().id;
  t.equal((await gw.pub({ method: 'DELETE', url: `/auth/api-key/${adminKey}`, headers: bearer(tokens.developer) })).statusCode, 403, "not the admin's");

  // An admin neither touches an owner nor makes one.
  const listed = (await gw.pub({ url: '/auth/members', headers: bearer(tokens.admin) })).json<{ members: Array<{ id: string; role: string; first: boolean }> }>().members;
  const owner = listed.find((m) => m.first)!;
  const viewer = listed.find((m) => m.role === 'viewer')!;
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/members/${owner.id}`, headers: bearer(tokens.admin), payload: { role: 'viewer' } })).statusCode, 403, "an admin does not demote an owner");
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/members/${viewer.id}`, headers: bearer(tokens.admin), payload: { role: 'owner' } })).statusCode, 403, 'nor makes one');
  t.equal((await gw.pub({ method: 'PATCH', url: `/auth/members/${viewer.id}`, headers: bearer(tokens.admin), payload: { role: 'developer' } })).statusCode, 200, 'but changes the others');
  // API keys are no members: their scopes decide, as before.
  const all = await gw.createApiKey(tokens.owner);
  t.equal((await gw.pub({ method: 'DELETE', url: '/auth/sessions/ses_unknown', headers: bearer(all.apiKey) })).statusCode, 404, 'an API key with keys:write ends sessions as before');
}

t.test('the role matrix on the memory store', async (t) => {
  await matrix(t, await injectGateway(t));
});

t.test('the role matrix on Redis', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  await matrix(t, await injectGateway(t, { env: { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' } }));
});
