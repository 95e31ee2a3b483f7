import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import type { DeliveryTuning } from '../../src/notices/delivery.js';
import { ADMIN_TOKEN, eventually, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { closedPort, startWebhookReceiver, type ReceivedNotice, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Security notices (issue 31) over real HTTP: a real gateway with AUTHGATE_NOTIFY_WEBHOOK_URL and
 * a real receiver on loopback. The receiver checks every notice with the Node snippet that
 * docs/operations-notices.md prints ("Security notices"); retries on 5xx and 429 keep the delivery id; a
 * refused port or a receiver that never answers delays no request (asserted by order: the answer
 * is in while the notice is still pending); no password, token or reset token is in a notice; a
 * failed delivery's log line names no URL credentials; a full queue drops and counts.
 */

const SECRET = 'notices-test-secret-0123456789abcdef-XyZ';
const json = { ...UA, 'content-type': 'application/json' };

// The docs' verification snippet, as printed, written beside the tests (a dot file: no glob takes it).
const root = new URL('../../', import.meta.url);
const page = readFileSync(new URL('docs/operations-notices.md', root), 'utf8');
const blocks = [...page.matchAll(/^```js\n(\/\/ verify-notice\.mjs\n[\s\S]*?)^```$/gm)];
if (blocks.length !== 1) throw new Error(`docs/operations-notices.md has ${blocks.length} \`// verify-notice.mjs\` blocks, not one`);
const snippetFile = fileURLToPath(new URL(`test/.notice-snippet-${process.pid}.mjs`, root));
await writeFile(snippetFile, blocks[0]![1]!);
t.teardown(() => rm(snippetFile, { force: true }));
process.env['AUTHGATE_NOTIFY_WEBHOOK_SECRET'] = SECRET; // the snippet reads it at import
const { verifyNotice } = (await import(pathToFileURL(snippetFile).href)) as {
  verifyNotice: (raw: Buffer, headers: Record<string, unknown>, nowMs?: number) => Notice | null;
};

type Notice = {
  id: string;
  type: string;
  occurredAt: string;
  sentAt: number;
  organization: { id: string; name: string | null; email: string | null };
  actor: string;
  network: string | null;
  details: Record<string, unknown>;
  previousEmail?: string;
};

async function noticed(t: Test, options: { url: string; tuning?: Partial<DeliveryTuning> }): Promise<StartedGateway> {
  return startGateway(t, {
    env: { AUTHGATE_NOTIFY_WEBHOOK_URL: options.url, AUTHGATE_NOTIFY_WEBHOOK_SECRET: SECRET },
    deps: { noticeTuning: { baseDelayMs: 20, ...options.tuning } },
  });
}

async function receiver(t: Test, answer?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(answer);
  t.teardown(() => r.close());
  return r;
}

const post = (gw: StartedGateway, path: string, body: unknown, token?: string): Promise<Response> =>
  send(`${gw.publicUrl}${path}`, { method: 'POST', headers: { ...json, ...(token !== undefined && { authorization: `Bearer ${token}` }) }, body: JSON.stringify(body) });

async function outcomes(gw: StartedGateway): Promise<Record<string, number>> {
  const metric = await gw.gateway.metrics.notices.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels['outcome']), v.value]));
}

const verified = (r: ReceivedNotice) => verifyNotice(r.raw, r.headers);

async function changePassword(t: Test, gw: StartedGateway, token: string, currentPassword: string, newPassword: string): Promise<string> {
  const res = await post(gw, '/auth/password', { currentPassword, newPassword }, token);
  t.equal(res.status, 200, 'the password is changed');
  return (res.json() as { token: string }).token;
}

t.test('a change, an operator reset and its use each send one signed notice the documented snippet verifies', async (t) => {
  const hook = await receiver(t);
  // User and password in the URL: sent as Basic auth, never logged.
  const gw = await noticed(t, { url: hook.url.replace('http://', 'http://hook-user:hook-pass-9f8e7d@') });
  const org = await gw.createOrganization({ name: 'Notice Test Org' });
  const token = await gw.login(org.email, org.password);
  const changed = 'a changed password that is long enough 1';
  const fresh = await changePassword(t, gw, token, org.password, changed);
  const issued = await send(`${gw.opsUrl}/admin/organizations/${org.id}/password-reset`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  t.equal(issued.status, 200, 'a reset is issued');
  const { resetToken } = issued.json() as { resetToken: string };
  const reset = 'reset to another long password 22';
  t.equal((await post(gw, '/auth/password/reset', { resetToken, newPassword: reset })).status, 204, 'the reset token is used');

  t.ok(await eventually(async () => hook.received.length >= 3 && (await outcomes(gw))['delivered'] === 3), 'three notices delivered');
  t.equal(hook.received.length, 3, 'one per event: the login and the session changes send none');
  const notices = hook.received.map(verified);
  t.ok(notices.every((n) => n !== null), 'each verifies: signature, timestamp, delivery id');
  const byType = new Map(notices.map((n) => [n!.type, n!]));
  t.same([...byType.keys()].sort(), ['password.changed', 'password.reset', 'password.reset_issued']);
  for (const n of byType.values()) {
    t.same(n.organization, { id: org.id, name: 'Notice Test Org', email: org.email }, `${n.type}: the organization as the store holds it`);
    t.equal(n.network, '127.0.0.0/24', `${n.type}: the network, coarse`);
    t.ok(Math.abs(Date.parse(n.occurredAt) - Date.now()) < 60_000, `${n.type}: occurredAt is the event's time`);
    t.notOk('previousEmail' in n, `${n.type}: no previousEmail`);
  }
  t.equal(byType.get('password.changed')!.actor, 'organization');
  t.same(byType.get('password.changed')!.details, { sessionsEnded: 1 }, 'the audit entry\'s details');
  t.equal(byType.get('password.reset_issued')!.actor, 'admin');
  t.equal(byType.get('password.reset')!.actor, 'anonymous');
  for (const r of hook.received) {
    t.equal(r.method, 'POST');
    t.equal(r.url, '/hooks/authgate', 'to the URL\'s path');
    t.equal(r.headers['content-type'], 'application/json');
    t.equal(r.headers['authorization'], `Basic ${Buffer.from('hook-user:hook-pass-9f8e7d').toString('base64')}`, 'the URL\'s credentials as Basic auth');
    t.match(r.headers['x-authgate-signature'], /^sha256=[0-9a-f]{64}$/);
  }
  t.equal(new Set(notices.map((n) => n!.id)).size, 3, 'each notice its own id');

  // What the snippet refuses: a changed byte, another secret's signature, a stale timestamp.
  const one = hook.received[0]!;
  const tampered = Buffer.from(one.raw.toString('utf8').replace('"actor":"', '"actor":"x'));
  t.equal(verifyNotice(tampered, one.headers), null, 'a changed body is refused');
  t.equal(verifyNotice(one.raw, { ...one.headers, 'x-authgate-timestamp': String(Number(one.headers['x-authgate-timestamp']) + 1) }), null, 'a changed timestamp is refused');
  t.equal(verifyNotice(one.raw, one.headers, Date.now() + 10 * 60_000), null, 'an old notice (replayed later) is refused');
  t.equal(verifyNotice(one.raw, { ...one.headers, 'x-authgate-signature': `sha256=${'0'.repeat(64)}` }), null, 'a forged signature is refused');

  const everything = hook.received.map((r) => `${JSON.stringify(r.headers)}\n${r.raw.toString('utf8')}`).join('\n');
  for (const secret of [org.password, changed, reset, token, fresh, resetToken, SECRET]) t.notOk(everything.includes(secret), 'no password, token, reset token or the secret in a notice');
  t.notOk(gw.logs.text().includes('hook-pass-9f8e7d'), 'the URL\'s password is never logged');
});

t.test('fuzz: no password or token of a password change ever reaches a notice, in any encoding', async (t) => {
  const hook = await receiver(t);
  const gw = await noticed(t, { url: hook.url });
  const org = await gw.createOrganization();
  let password = org.password;
  let token = await gw.login(org.email, password);
  const secrets = [password, token];
  for (let i = 0; i < 4; i++) {
    // Quotes, backslashes, non-ASCII and astral characters: whatever JSON would escape.
    const next = `${randomBytes(9).toString('base64')}"\\é😀 ${['ü', '</', "'", '\u2028', '%', '+'][i]} ${randomBytes(6).toString('hex')}`;
    token = await changePassword(t, gw, token, password, next);
    password = next;
    secrets.push(password, token);
  }
  t.ok(await eventually(async () => (await outcomes(gw))['delivered'] === 4), 'four notices delivered');
  const bodies = hook.received.map((r) => `${JSON.stringify(r.headers)}\n${r.raw.toString('utf8')}\n${r.raw.toString('latin1')}`).join('\n');
  for (const secret of secrets) {
    for (const form of [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) {
      t.notOk(bodies.includes(form), 'never in a notice');
    }
  }
  t.ok(hook.received.every((r) => verified(r)?.type === 'password.changed'), 'each a verified password.changed');
});

t.test('an e-mail change\'s notice carries the address it left; events of no organization or of other types send none', async (t) => {
  const hook = await receiver(t);
  const gw = await noticed(t, { url: hook.url });
  const org = await gw.createOrganization({ name: 'Renamed Later' });
  // The trail's seam as the profile routes (lane org-profile) call it.
  gw.gateway.audit.record({ type: 'login.succeeded', orgId: org.id, actor: 'organization' });
  gw.gateway.audit.record({ type: 'password.changed', actor: 'anonymous' });
  gw.gateway.audit.record({ type: 'organization.email_changed', orgId: org.id, actor: 'admin', network: '127.0.0.0/24', details: { by: 'test' } }, { previousEmail: 'left-behind@example.test' });
  gw.gateway.audit.record({ type: 'organization.name_changed', orgId: org.id, actor: 'admin' }, { previousEmail: 'not-for-a-name-change@example.test' });
  t.ok(await eventually(async () => (await outcomes(gw))['delivered'] === 2), 'two notices delivered');
  t.equal(hook.received.length, 2, 'a login and an event of no organization send none');
  const byType = new Map(hook.received.map(verified).map((n) => [n!.type, n!]));
  t.equal(byType.get('organization.email_changed')?.previousEmail, 'left-behind@example.test', 'the e-mail change names the address it left');
  t.same(byType.get('organization.email_changed')?.details, { by: 'test' });
  t.notOk('previousEmail' in byType.get('organization.name_changed')!, 'only an e-mail change carries one');
  t.equal(byType.get('organization.name_changed')?.organization.email, org.email, 'the organization as the store holds it');
  await gw.gateway.audit.flush();
  t.notOk(gw.logs.text().includes('left-behind@example.test'), 'the previous address is never logged');
});

t.test('5xx and 429 are retried with the same delivery id until delivered; another 4xx ends it at once, logged', async (t) => {
  const statuses = [500, 429, 503, 200, 400];
  const hook = await receiver(t, (n) => statuses[n] ?? 200);
  const gw = await noticed(t, { url: hook.url });
  const org = await gw.createOrganization();
  gw.gateway.audit.record({ type: 'password.reset_issued', orgId: org.id, actor: 'admin', details: { sessionsEnded: 0 } });
  t.ok(await eventually(async () => (await outcomes(gw))['delivered'] === 1), 'delivered after three failures');
  t.same(await outcomes(gw), { retried: 3, delivered: 1 }, 'three retries counted');
  const ids = new Set(hook.received.map((r) => r.headers['x-authgate-delivery']));
  t.equal(hook.received.length, 4, 'four attempts');
  t.equal(ids.size, 1, 'one delivery id across its attempts');
  t.ok(hook.received.every((r) => verified(r) !== null), 'each attempt signed afresh and verifiable');

  gw.gateway.audit.record({ type: 'password.reset_issued', orgId: org.id, actor: 'admin' });
  t.ok(await eventually(async () => (await outcomes(gw))['failed'] === 1), 'a 400 fails it');
  t.equal(hook.received.length, 5, 'not retried');
  const line = gw.logs.records().find((r) => r['event'] === 'notice_failed');
  t.match(line, { type: 'password.reset_issued', orgId: org.id, attempts: 1, reason: 'status 400', webhook: new URL(hook.url).origin }, 'the failure is logged with its reason');
});

t.test("a 429's Retry-After is waited for before the next attempt", async (t) => {
  const hook = await receiver(t, (n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : 200));
  const gw = await noticed(t, { url: hook.url });
  const org = await gw.createOrganization();
  gw.gateway.audit.record({ type: 'password.reset_issued', orgId: org.id, actor: 'admin' });
  t.ok(await eventually(async () => (await outcomes(gw))['delivered'] === 1), 'delivered on the second attempt');
  t.equal(hook.received.length, 2);
  t.ok(hook.received[1]!.at - hook.received[0]!.at >= 950, 'not before the second the receiver asked for (base wait: 20 ms)');
});

t.test('a key reported leaked sends a notice naming the key by id, never the key', async (t) => {
  const hook = await receiver(t);
  const gw = await noticed(t, { url: hook.url });
  const org = await gw.createOrganization();
  const key = await gw.createApiKey(await gw.login(org.email, org.password));
  const reported = await post(gw, '/auth/api-key/leaked', { keys: [key.apiKey] });
  t.equal(reported.status, 202, 'the report is taken');
  t.ok(await eventually(async () => (await outcomes(gw))['delivered'] === 1), 'one notice delivered');
  const notice = verified(hook.received[0]!);
  t.match(notice, { type: 'api_key.leaked', actor: 'anonymous', organization: { id: org.id }, details: { keyId: key.id } });
  t.notOk(hook.received[0]!.raw.toString('utf8').includes(key.apiKey), 'never the key');
});

t.test('a refused port delays no request; its failure is logged without the URL\'s credentials or path', async (t) => {
  const port = await closedPort();
  const gw = await noticed(t, { url: `http://dead-user:dead-pass-4c3b2a@127.0.0.1:${port}/hook/path-token-5e6f`, tuning: { maxAttempts: 2, baseDelayMs: 1500 } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  await changePassword(t, gw, token, org.password, 'changed while the webhook is down 3');
  // The answer is in; the notice is not given up yet (its first try was refused, its second waits).
  t.equal(gw.gateway.notices?.pending(), 1, 'the request was answered while its notice is still pending');
  t.notOk((await outcomes(gw))['failed'], 'not failed yet');
  t.ok(await eventually(async () => (await outcomes(gw))['failed'] === 1, 10_000), 'given up after its attempts');
  t.same(await outcomes(gw), { retried: 1, failed: 1 });
  const line = gw.logs.records().find((r) => r['event'] === 'notice_failed');
  t.match(line, { type: 'password.changed', attempts: 2, reason: 'ECONNREFUSED', webhook: `http://127.0.0.1:${port}` });
  for (const part of ['dead-user', 'dead-pass-4c3b2a', 'path-token-5e6f']) t.notOk(gw.logs.text().includes(part), `no ${part} in any log line`);
});

t.test('a webhook that never answers delays no request, and a shutdown waits for it only so long', async (t) => {
  const hook = await receiver(t, () => 'hold');
  const gw = await noticed(t, { url: hook.url, tuning: { attemptTimeoutMs: 120_000, drainMs: 200 } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const fresh = await changePassword(t, gw, token, org.password, 'changed while the webhook hangs 44');
  t.ok(await eventually(async () => hook.received.length === 1), 'the notice reached the receiver, which holds its answer');
  t.equal((await gw.get('/auth/api-key', { authorization: `Bearer ${fresh}` })).status, 200, 'requests go on while it hangs');
  t.equal(gw.gateway.notices?.pending(), 1, 'still pending after the request was answered');
  hook.release();
  t.ok(await eventually(async () => (await outcomes(gw))['delivered'] === 1), 'delivered once answered');

  // Now a notice held at shutdown: close() lets go after drainMs, counting and logging it.
  gw.gateway.audit.record({ type: 'password.reset_issued', orgId: org.id, actor: 'admin' });
  t.ok(await eventually(async () => hook.received.length === 2), 'the second notice is held');
  await gw.gateway.close();
  t.equal((await outcomes(gw))['failed'], 1, 'counted as failed');
  t.ok(gw.logs.records().some((r) => r['event'] === 'notices_abandoned' && r['notices'] === 1), 'logged as abandoned at shutdown');
});

t.test('a full queue drops new notices, counts them and logs once', async (t) => {
  const hook = await receiver(t, () => 'hold');
  const gw = await noticed(t, { url: hook.url, tuning: { maxQueued: 3, concurrency: 1, attemptTimeoutMs: 120_000 } });
  const org = await gw.createOrganization();
  for (let i = 0; i < 7; i++) gw.gateway.audit.record({ type: 'password.reset_issued', orgId: org.id, actor: 'admin' });
  t.same(await outcomes(gw), { dropped: 4 }, 'four dropped');
  t.equal(gw.logs.records().filter((r) => r['event'] === 'notices_dropped').length, 1, 'one log line for the overflow');
  t.ok(await eventually(async () => hook.received.length === 1), 'one under way (concurrency 1)');
  hook.release();
  t.ok(
    await eventually(async () => {
      hook.release();
      return (await outcomes(gw))['delivered'] === 3;
    }),
    'the three queued are delivered',
  );
});

t.test('through the API: an organization changing its e-mail, and an operator renaming it, each send one notice; the one of the e-mail change names the address it left', async (t) => {
  const hook = await receiver(t);
  const gw = await noticed(t, { url: hook.url });
  const org = await gw.createOrganization({ name: 'Notice Profile Co' });
  const token = await gw.login(org.email, org.password);
  const newEmail = `moved-${randomBytes(4).toString('hex')}@example.test`;
  const patched = await send(`${gw.publicUrl}/auth/organization`, {
    method: 'PATCH',
    headers: { ...json, authorization: `Bearer ${token}` },
    body: JSON.stringify({ email: newEmail, currentPassword: org.password }),
  });
  t.equal(patched.status, 200, 'the e-mail is changed');
  const renamed = await send(`${gw.opsUrl}/admin/organizations/${org.id}`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ name: 'Renamed By Operator' }),
  });
  t.equal(renamed.status, 200, 'the operator renames it');
  t.ok(await eventually(async () => hook.received.length >= 2), 'two notices arrive');
  const byType = new Map(hook.received.map(verified).map((n) => [n!.type, n!]));
  const moved = byType.get('organization.email_changed');
  t.equal(moved?.previousEmail, org.email, 'the address it left');
  t.equal(moved?.actor, 'organization');
  const named = byType.get('organization.name_changed');
  t.equal(named?.actor, 'admin');
  t.equal(named?.organization.name, 'Renamed By Operator', 'the organization as it is now');
  t.equal(named?.organization.email, newEmail);
  for (const r of hook.received) t.notOk(r.raw.includes(org.password) || r.raw.includes(token), 'no password or token in a notice');
});
