import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createPasswordHasher } from '../../src/credentials/passwords.js';
import { ADMIN_TOKEN, send, startGateway, UA, type Response, type StartedGateway } from '../helpers/gateway.js';
import { startRedis } from '../helpers/redis.js';

/**
 * The password policy (issue 31, NIST SP 800-63B-4 §3.1.1.2) over real HTTP, on the memory store
 * and on a real Redis: each reason refused at its boundary with its own code, nothing stored on a
 * refusal, the password in no answer, log line or audit entry, and logins never judged by it.
 */

const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

let n = 0;
const freshEmail = (local = 'owner') => `${local}-${++n}-${process.pid}@example.test`;

function create(gw: StartedGateway, body: { name: string; email: string; password: string }): Promise<Response> {
  return send(`${gw.opsUrl}/admin/organizations`, { method: 'POST', headers: admin, body: JSON.stringify(body) });
}

function login(gw: StartedGateway, email: string, password: string): Promise<Response> {
  return send(`${gw.publicUrl}/auth/login`, { method: 'POST', headers: { ...UA, 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
}

const codePoints = (text: string) => [...text].length;

// 🦊 is one code point and two UTF-16 units: a count in units would take 14 code points for 16.
const FOURTEEN = 'quiet-ferry-🦊🦊';
const FIFTEEN = 'quiet-ferry-🦊🦊🦊';
// 128 code points in 192 UTF-16 units: a count in units would refuse it.
const MAX = `${'a'.repeat(64)}${'🦊'.repeat(64)}`;
const OVER_MAX = `${MAX}b`;

/** A refusal: 400, its code, a detail that says why, and neither the password nor the words matched. */
function assertRefused(t: Test, res: Response, code: number, what: string, secrets: readonly string[]): void {
  t.equal(res.status, 400, `${what}: 400`);
  t.match(res.headers['content-type'], /^application\/problem\+json/);
  const body = res.json() as { code: number; detail?: string; title: string };
  t.equal(body.code, code, `${what}: code ${code}`);
  t.ok((body.detail ?? '').length > 20, `${what}: a detail says why`);
  for (const secret of secrets.filter((s) => s !== '')) t.notOk(res.body.toLowerCase().includes(secret.toLowerCase()), `${what}: the answer does not repeat it`);
}

async function policyOverHttp(t: Test, env: Record<string, string>) {
  const gw = await startGateway(t, { env });
  const tried: string[] = [];
  const refuse = async (t: Test, body: { name: string; email: string; password: string }, code: number, what: string, words: readonly string[] = []) => {
    tried.push(body.password);
    assertRefused(t, await create(gw, body), code, what, [body.password, ...words]);
    const found = await send(`${gw.opsUrl}/admin/organizations?email=${encodeURIComponent(body.email)}`, { headers: admin });
    t.same(found.json().organizations, [], `${what}: nothing was stored`);
  };
  const accept = async (t: Test, body: { name: string; email: string; password: string }, what: string) => {
    tried.push(body.password);
    const res = await create(gw, body);
    t.equal(res.status, 201, `${what}: 201 (${res.body.slice(0, 200)})`);
    t.notOk(res.body.includes(body.password), `${what}: the answer does not carry the password`);
    t.equal((await login(gw, body.email, body.password)).status, 200, `${what}: and it logs in`);
  };

  t.test('length in code points: 14 with an emoji is too short (1213), 15 is enough', async (t) => {
    t.equal(codePoints(FOURTEEN), 14);
    t.equal(FOURTEEN.length, 16, 'though 16 UTF-16 units');
    await refuse(t, { name: 'Harbour', email: freshEmail(), password: FOURTEEN }, 1213, '14 code points');
    assertRefused(t, await create(gw, { name: 'Harbour', email: freshEmail(), password: '' }), 1213, 'an empty password', []);
    await accept(t, { name: 'Harbour', email: freshEmail(), password: FIFTEEN }, '15 code points');
  });

  t.test('at most 128 code points, never truncated: 129 is too long (1214)', async (t) => {
    t.equal(codePoints(MAX), 128);
    t.equal(MAX.length, 192, 'though 192 UTF-16 units');
    await accept(t, { name: 'Long', email: freshEmail(), password: MAX }, '128 code points');
    await refuse(t, { name: 'Long', email: freshEmail(), password: OVER_MAX }, 1214, '129 code points');
    await refuse(t, { name: 'Long', email: freshEmail(), password: 'x'.repeat(20_000) }, 1214, '20,000 characters');
    // Not truncated: the 128 code points are the whole password, a prefix of it does not log in.
    const email = freshEmail();
    await accept(t, { name: 'Long', email, password: `${'c'.repeat(100)}${'🦊'.repeat(28)}` }, 'another 128');
    t.equal((await login(gw, email, `${'c'.repeat(100)}${'🦊'.repeat(27)}`)).status, 401, 'one code point less is another password');
  });

  t.test('a password of the blocklist, in another case: 1215', async (t) => {
    await refuse(t, { name: 'Common', email: freshEmail(), password: 'PassWordPassWord' }, 1215, 'passwordpassword in mixed case');
    await refuse(t, { name: 'Common', email: freshEmail(), password: '1QAZ2WSX3EDC4RFV' }, 1215, 'a keyboard walk in upper case');
    await accept(t, { name: 'Common', email: freshEmail(), password: 'PassWordPassWord!' }, 'the listed one with one more character (whole passwords only)');
  });

  t.test("the organization's name or its e-mail's local part inside, in any case: 1216", async (t) => {
    await refuse(t, { name: 'Quillfeather', email: freshEmail(), password: 'my-QUILLFEATHER-secret-phrase' }, 1216, 'the name inside', ['quillfeather']);
    await refuse(t, { name: '  Quill Feather  ', email: freshEmail(), password: 'ink and quill feather, 1887' }, 1216, 'the name as trimmed, with its space', ['quill feather']);
    const email = `marguerite.${++n}@example.test`;
    await refuse(t, { name: 'Acme', email, password: `xx-MARGUERITE.${n}-passphrase` }, 1216, 'the local part inside', [`marguerite.${n}`]);
    await accept(t, { name: 'Acme', email, password: 'a passphrase of other words' }, 'and the same e-mail with another password');
    // Shorter than 4 code points, a name or local part is not looked for (it would turn up by chance).
    await accept(t, { name: 'Bo', email: freshEmail(), password: 'bo-bo-bonbon-passphrase' }, 'a 2-letter name');
    await accept(t, { name: 'Ann', email: `ann@${n}.example.test`, password: 'annual report passphrase' }, 'a 3-letter local part');
  });

  t.test('the password is in no log line and no audit entry; the refusals are logged by their status only', async (t) => {
    await gw.gateway.audit.flush();
    const audit = await send(`${gw.opsUrl}/admin/audit?limit=500`, { headers: admin });
    t.equal(audit.status, 200);
    const logs = gw.logs.text();
    t.match(logs, /"route":"\/admin\/organizations","status":400/, 'the refusals reached the log, by their status');
    for (const password of tried.filter((p) => p !== '')) {
      t.notOk(logs.includes(password), 'not in a log line');
      t.notOk(audit.body.includes(password), 'not in the audit trail');
    }
  });

  t.test('logins never apply the policy: a password set before it (short, and on the blocklist) still logs in', async (t) => {
    const email = freshEmail('legacy');
    const passwordHash = await createPasswordHasher().hash('hunter2');
    const written = await gw.gateway.storage.store.createOrganizationIfEmailFree({ id: `org_${randomUUID().replaceAll('-', '')}`, name: 'Legacy', email, passwordHash, createdAt: new Date().toISOString() });
    t.not(written, 'email-taken');
    t.equal((await login(gw, email, 'hunter2')).status, 200, 'the old password logs in');
    t.equal((await login(gw, email, 'HUNTER2')).status, 401, 'and only it');
    await refuse(t, { name: 'Legacy', email: freshEmail('legacy'), password: 'hunter2' }, 1213, 'the same password for a new organization');
  });
}

t.test('memory store', (t) => policyOverHttp(t, {}));

t.test('redis store', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  await policyOverHttp(t, { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' });

  t.test('a password set under a lower minimum logs in on a replica whose minimum is the default', async (t) => {
    const env = { AUTHGATE_REDIS_URL: redis.url, AUTHGATE_REDIS_TIMEOUT_MS: '1000' };
    const lenient = await startGateway(t, { env: { ...env, AUTHGATE_PASSWORD_MIN_LENGTH: '8' } });
    const strict = await startGateway(t, { env });
    const email = freshEmail('lenient');
    assertRefused(t, await create(lenient, { name: 'Lenient', email, password: 'ferry🦊7' }), 1213, '7 code points under a minimum of 8', ['ferry🦊7']);
    t.equal((await create(lenient, { name: 'Lenient', email, password: 'ferry🦊78' })).status, 201, '8 code points under a minimum of 8');
    assertRefused(t, await create(strict, { name: 'Lenient', email: freshEmail('lenient'), password: 'ferry🦊78' }), 1213, 'the same password where the minimum is 15', []);
    t.equal((await login(strict, email, 'ferry🦊78')).status, 200, 'the organization logs in with it on the strict replica');
  });
});

t.test('the OpenAPI document lists every refusal on the operation that sets a password', async (t) => {
  const gw = await startGateway(t);
  const doc = (await send(`${gw.opsUrl}/openapi/admin.json`)).json() as { paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>> };
  const described = doc.paths['/admin/organizations']?.['post']?.responses['400']?.description ?? '';
  for (const code of ['1200', '1213', '1214', '1215', '1216']) t.match(described, new RegExp(`- ${code}: `), `createOrganization's 400 lists ${code}`);
});

/** A real start, as an operator would make it; bounded, and killed if it ever listened. */
function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env['PATH'] ?? '', AUTHGATE_PORT: '0', AUTHGATE_OPS_PORT: '0', AUTHGATE_HOST: '127.0.0.1', AUTHGATE_OPS_HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

t.test('AUTHGATE_PASSWORD_MIN_LENGTH under 8 stops a real start, naming the setting', async (t) => {
  const run = await start({ AUTHGATE_PASSWORD_MIN_LENGTH: '7' });
  t.not(run.code, 0, 'the start fails');
  t.not(run.code, null, 'it exited by itself, without listening');
  t.match(run.stderr, /AUTHGATE_PASSWORD_MIN_LENGTH/);
});
