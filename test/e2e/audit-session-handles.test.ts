import t from 'tap';
import { decodeJwt } from 'jose';
import { ADMIN_TOKEN, send, startGateway, type StartedGateway } from '../helpers/gateway.js';
import { call } from '../helpers/second-factor.js';

/**
 * Issue 45: the audit trail named a login token's credential by the raw session id the token is
 * signed over (`credential.id` of `api_key.created`, `api_key.changed`, `session.ended`, …), so
 * whoever read the trail (any `audit:read` key, the operator) and had the JWT secret could sign a
 * working token. Every event is named by the session's `ses_…` handle instead, the one GET
 * /auth/sessions shows. Read over real HTTP through both GET /auth/audit and GET /admin/audit.
 */

type Page = { events: Array<{ type: string; credential: { kind: string; id: string } | null }>; nextCursor: string | null };

async function trailText(gw: StartedGateway, token: string, orgId: string): Promise<{ own: string; operator: string }> {
  await gw.gateway.audit.flush();
  const own = await call(gw, 'GET', '/auth/audit?limit=100', undefined, token);
  t.equal(own.status, 200, 'GET /auth/audit');
  const operator = await send(`${gw.opsUrl}/admin/audit?org=${orgId}&limit=100`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(operator.status, 200, 'GET /admin/audit');
  return { own: own.body, operator: operator.body };
}

t.test('no raw session id anywhere in the trail: a login token is named by its ses_ handle', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const other = await gw.login(org.email, org.password);
  const sessionIds = [token, other].map((jwt) => decodeJwt(jwt).sub as string);

  const made = await call(gw, 'POST', '/auth/api-key', { name: 'ci', scopes: ['accounts:read'] }, token);
  t.equal(made.status, 201, 'api_key.created by a login token');
  const keyId = (made.json() as { id: string }).id;
  t.equal((await call(gw, 'PATCH', `/auth/api-key/${keyId}`, { name: 'ci-2' }, token)).status, 200, 'api_key.changed by a login token');
  const listed = (await call(gw, 'GET', '/auth/sessions', undefined, token)).json() as { sessions: Array<{ id: string; current?: boolean }> };
  const handles = listed.sessions.map((s) => s.id);
  t.equal(handles.length, 2);
  const otherHandle = handles.find((h) => h !== listed.sessions.find((s) => s.current)?.id) ?? handles[1]!;
  t.equal((await call(gw, 'DELETE', `/auth/sessions/${otherHandle}`, undefined, token)).status, 204, 'session.ended by a login token');

  const { own, operator } = await trailText(gw, token, org.id);
  for (const [name, text] of [['GET /auth/audit', own], ['GET /admin/audit', operator]] as const) {
    for (const id of sessionIds) t.notOk(text.includes(id), `${name}: no raw session id anywhere`);
    const page = JSON.parse(text) as Page;
    const byToken = page.events.filter((e) => e.credential?.kind === 'jwt');
    t.ok(['api_key.created', 'api_key.changed', 'session.ended'].every((type) => byToken.some((e) => e.type === type)), `${name}: the token's events are there`);
    for (const event of byToken) t.ok(handles.includes(event.credential!.id), `${name}: ${event.type} names the session by its handle (${event.credential!.id})`);
  }
});
