import t from 'tap';
import { ADMIN_TOKEN, send, startGateway, UA } from '../helpers/gateway.js';

/**
 * Issue 26: a failed login for an organization's e-mail was recorded with orgId null, so the
 * organization never saw attempts on its own account. It is its event now; an unknown e-mail's
 * stays the operator's only; and the answer does not tell the two apart.
 */

type Page = { events: Array<{ type: string; orgId: string | null; actor: string; details: Record<string, unknown> }> };

t.test('a failed login on an organization\'s e-mail is in that organization\'s trail, not the other\'s; an unknown e-mail\'s is admin-only', async (t) => {
  const gw = await startGateway(t);
  const a = await gw.createOrganization();
  const b = await gw.createOrganization();
  const post = (email: string) =>
    send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'not-the-password-at-all' }) });
  const onA = await post(a.email.toUpperCase()); // the e-mail as typed, normalized like a login
  const unknown = await post('nobody-at-all@example.test');
  // The same answer for a known and an unknown e-mail: status, type, code, title, detail.
  t.equal(onA.status, 401);
  t.equal(unknown.status, 401);
  const shape = (body: Record<string, unknown>) => ({ type: body['type'], title: body['title'], status: body['status'], code: body['code'], detail: body['detail'] });
  t.same(shape(onA.json()), shape(unknown.json()), 'the answer does not say whether the e-mail exists');
  t.same(Object.keys(onA.json()).sort(), Object.keys(unknown.json()).sort());
  await gw.gateway.audit.flush();

  const read = async (email: string, password: string) => {
    const token = await gw.login(email, password);
    const res = await send(`${gw.publicUrl}/auth/audit?type=login.failed`, { headers: { ...UA, authorization: `Bearer ${token}` } });
    t.equal(res.status, 200);
    return res.json() as Page;
  };
  const aView = await read(a.email, a.password);
  t.equal(aView.events.length, 1, 'A sees the attempt on its own account');
  t.match(aView.events[0], { type: 'login.failed', orgId: a.id, actor: 'anonymous', details: { reason: 'bad_password', emailDigest: /^[A-Za-z0-9_-]{16}$/ } });
  t.same((await read(b.email, b.password)).events, [], 'B sees nothing of it');

  const all = (await send(`${gw.opsUrl}/admin/audit?type=login.failed`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as Page;
  t.same(all.events.map((e) => e.orgId).sort(), [a.id, null].sort(), 'the operator sees both: A\'s attributed, the unknown e-mail\'s with none');
  t.notOk(JSON.stringify(all).includes('nobody-at-all'), 'an e-mail only as a digest');
});

t.test('the repeated-failure event is attributed too', async (t) => {
  const gw = await startGateway(t);
  const a = await gw.createOrganization();
  for (let i = 0; i < 10; i++) {
    const res = await send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email: a.email, password: `wrong-password-${i}` }) });
    t.equal(res.status, 401);
  }
  await gw.gateway.audit.flush();
  const all = (await send(`${gw.opsUrl}/admin/audit?type=login.throttled`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as Page;
  t.same(all.events.map((e) => e.orgId), [a.id]);
});
