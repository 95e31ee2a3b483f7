/**
 * A value that does not match its schema's pattern is refused with 400 (code 1200) saying in words
 * what is expected, never the raw regular expression (issue 27), on the public and the admin API.
 */
import t from 'tap';
import { ADMIN_TOKEN, UA, send, startGateway } from '../helpers/gateway.js';
import { PATTERN_WORDS } from '../../src/http/validation-message.js';

const gw = await startGateway(t);
const org = await gw.createOrganization();
const token = await gw.login(org.email, org.password);
const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
const user = { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' };

/** A regular expression's tell-tale characters, as they appeared in the old messages. */
const REGEX = /\^|\$|\[[^\]]*-[^\]]*\]|\\S|\{\d/;

const cases: [string, string, string, Record<string, string>, string | undefined, RegExp][] = [
  ['a key rate limit', 'POST', `${gw.publicUrl}/auth/api-key`, user, JSON.stringify({ rateLimit: '100 per minute' }), /body\/rateLimit must be .*like 100\/1m/],
  ['a scope', 'POST', `${gw.publicUrl}/auth/api-key`, user, JSON.stringify({ scopes: ['Accounts:Read'] }), /body\/scopes\/0 must be a scope name, resource:action in lower case/],
  ['a page size', 'GET', `${gw.publicUrl}/auth/api-key?limit=9000`, user, undefined, /querystring\/limit must be a whole number from 1 to 500/],
  ['an audit cursor', 'GET', `${gw.publicUrl}/auth/audit?cursor=abc`, user, undefined, /querystring\/cursor must be the nextCursor of the previous page/],
  ['a session id', 'DELETE', `${gw.publicUrl}/auth/sessions/a%20b`, user, undefined, /params\/id must be .*letters, digits/],
  ['an organization rate limit', 'PATCH', `${gw.opsUrl}/admin/organizations/${org.id}`, admin, JSON.stringify({ rateLimit: 'fast' }), /body\/rateLimit must be .*like 100\/1m.*off/],
  ['an organization id', 'GET', `${gw.opsUrl}/admin/organizations/org%21x`, admin, undefined, /params\/id must be .*letters, digits/],
  ['an e-mail', 'POST', `${gw.opsUrl}/admin/organizations`, admin, JSON.stringify({ name: 'X', email: 'no-at-sign', password: 'long enough password' }), /body\/email must be an e-mail address/],
  ['a blank name', 'POST', `${gw.opsUrl}/admin/organizations`, admin, JSON.stringify({ name: '   ', email: 'x@example.test', password: 'long enough password' }), /body\/name must be .*not only spaces/],
];

for (const [what, method, url, headers, body, expected] of cases) {
  t.test(`${what}: 400, said in words`, async (t) => {
    const res = await send(url, { method, headers, ...(body !== undefined && { body }) });
    t.equal(res.status, 400);
    t.match(res.headers['content-type'], /^application\/problem\+json/);
    const problem = res.json();
    t.equal(problem.code, 1200);
    t.match(problem.detail, expected, `detail: ${problem.detail}`);
    t.notMatch(problem.detail, /must match pattern/, 'not "must match pattern"');
    t.notMatch(problem.detail, REGEX, 'no regular expression');
  });
}

t.test('every pattern of every route schema has its words', async (t) => {
  const specs = [JSON.parse((await send(`${gw.opsUrl}/openapi.json`)).body), JSON.parse((await send(`${gw.opsUrl}/openapi/admin.json`)).body)];
  const patterns = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === 'pattern' && typeof v === 'string') patterns.add(v);
      else walk(v);
    }
  };
  walk(specs);
  t.ok(patterns.size >= 8, `the interface has patterns (${patterns.size})`);
  for (const p of patterns) t.ok(PATTERN_WORDS.has(p), `words for ${p}`);
});
