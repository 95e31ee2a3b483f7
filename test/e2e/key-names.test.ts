import t from 'tap';
import { ADMIN_TOKEN, send, startGateway, UA } from '../helpers/gateway.js';

/**
 * Issue 26: key names took control and bidirectional characters that spoof what the console (or
 * any listing) shows, e.g. U+202E turning "yek-dorp" around. Names with them are refused at the
 * API, 400 code 1200 with a detail naming the character: on create and rename of a key, on an
 * organization's creation at the admin API; a roll takes no name (its successor keeps the key's).
 */

const BAD: Array<[string, string]> = [
  ['U+0000', '\u0000'], ['U+0009 (tab)', '\t'], ['U+000A', '\n'], ['U+001B', '\u001b'], ['U+007F', '\u007f'],
  ['U+0085 (C1)', '\u0085'], ['U+009B (C1)', '\u009b'],
  ['U+202A', '\u202a'], ['U+202B', '\u202b'], ['U+202C', '\u202c'], ['U+202D', '\u202d'], ['U+202E', '\u202e'],
  ['U+2066', '\u2066'], ['U+2067', '\u2067'], ['U+2068', '\u2068'], ['U+2069', '\u2069'],
  ['U+200E', '\u200e'], ['U+200F', '\u200f'], ['U+061C', '\u061c'],
  // Other invisible format characters (Cf), and the line and paragraph separators.
  ['U+200B', '\u200b'], ['U+2060', '\u2060'], ['U+FEFF', '\ufeff'], ['U+00AD', '\u00ad'], ['U+2028', '\u2028'], ['U+2029', '\u2029'], ['U+E0041 (tag)', '\u{e0041}'],
  ['U+D800 (lone surrogate)', '\ud800'],
];
const GOOD = ['CI deploy', 'déploiement ünd ß', 'مفتاح الإنتاج', 'پروژه\u200cها', 'family \u{1F468}\u200d\u{1F469}\u200d\u{1F467}', '日本語のキー', 'a—b “quoted”'];

t.test('a name with a control, bidirectional or invisible format character is 400 (1200) on create and rename; real names in any script pass', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const call = (method: string, path: string, body: unknown) =>
    send(`${gw.publicUrl}${path}`, { method, headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const key = (await call('POST', '/auth/api-key', { name: 'plain' })).json() as { id: string };

  for (const [what, char] of BAD) {
    const name = `prod${char}key`;
    const created = await call('POST', '/auth/api-key', { name });
    t.equal(created.status, 400, `create with ${what}: 400`);
    t.equal(created.json().code, 1200);
    t.match(created.json().detail, new RegExp(`name .*${what.slice(0, 6).replace('+', '\\+')}`), `the detail names ${what}`);
    const renamed = await call('PATCH', `/auth/api-key/${key.id}`, { name });
    t.equal(renamed.status, 400, `rename with ${what}: 400`);
    t.equal(renamed.json().code, 1200);
  }
  const rolled = await call('POST', `/auth/api-key/${key.id}/roll`, { name: 'prod\u202ekey' });
  t.equal(rolled.status, 400, 'a roll takes no name at all');
  const listed = (await send(`${gw.publicUrl}/auth/api-key`, { headers: { ...UA, authorization: `Bearer ${token}` } }));
  t.same((listed.json() as { keys: Array<{ name: string }> }).keys.map((k) => k.name), ['plain'], 'nothing was created or renamed');

  for (const name of GOOD) {
    const created = await call('POST', '/auth/api-key', { name });
    t.equal(created.status, 201, `${JSON.stringify(name)} is a name`);
    t.equal(created.json().name, name);
  }
  t.equal((await call('PATCH', `/auth/api-key/${key.id}`, { name: GOOD[4] })).status, 200, 'and a rename to one');
});

t.test('an organization\'s name at the admin API: the same rule', async (t) => {
  const gw = await startGateway(t);
  const create = (name: string, n: number) =>
    send(`${gw.opsUrl}/admin/organizations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, email: `names-${n}-${process.pid}@example.test`, password: 'a-long-enough-password' }),
    });
  let n = 0;
  for (const [what, char] of BAD) {
    const res = await create(`Acme${char}Corp`, n++);
    t.equal(res.status, 400, `${what}: 400`);
    t.equal(res.json().code, 1200);
  }
  for (const name of GOOD) t.equal((await create(name, n++)).status, 201, `${JSON.stringify(name)} is a name`);
});
