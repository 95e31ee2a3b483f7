import t from 'tap';
import { assertProblem, injectGateway } from '../helpers/inject.js';

/**
 * routes/auth.ts through the whole public pipeline, by inject: POST /auth/login and
 * POST /auth/logout, what they answer and what the store holds afterwards.
 */

t.test('POST /auth/login', async (t) => {
  const gw = await injectGateway(t);
  const org = await gw.createOrganization({ email: 'Owner.Login@Example.test', password: 'login-route-password' });

  t.test('right e-mail and password: 200, a token, no-store, and a session in the store', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: 'owner.login@example.test', password: 'login-route-password' } });
    t.equal(res.statusCode, 200);
    t.equal(res.headers['cache-control'], 'no-store');
    t.match(res.headers['content-type'], /^application\/json/);
    const { token } = res.json<{ token: string }>();
    t.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT');
    t.same(Object.keys(res.json()), ['token'], 'the token and nothing else');
    // The token works on a route that needs a login token: the session it names is stored.
    const keys = await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } });
    t.equal(keys.statusCode, 200);
  });

  t.test('the e-mail compares case- and space-insensitively', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: '  OWNER.login@EXAMPLE.TEST ', password: 'login-route-password' } });
    t.equal(res.statusCode, 200);
  });

  t.test('a wrong password and an unknown e-mail: the same 401 1105, no token, the password not echoed', async (t) => {
    const wrong = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: org.email, password: 'wrong-password-marker' } });
    const wrongBody = assertProblem(t, wrong, 401, 1105, 'wrong password');
    t.ok(wrong.headers['www-authenticate'], 'a 401 carries WWW-Authenticate');
    t.notOk(wrong.body.includes('wrong-password-marker'));
    const unknown = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: 'nobody@example.test', password: 'wrong-password-marker' } });
    const unknownBody = assertProblem(t, unknown, 401, 1105, 'unknown e-mail');
    t.same(unknownBody, wrongBody, 'indistinguishable bodies');
    t.notOk(unknown.body.includes('nobody@example.test'), 'the e-mail is not echoed');
    t.notOk(gw.logs.text().includes('wrong-password-marker'), 'the password is never logged');
  });

  t.test('bodies that do not fit the schema: 400 1200, before any password is judged', async (t) => {
    const cases: Array<[string, unknown]> = [
      ['no password', { email: org.email }],
      ['no e-mail', { password: 'x' }],
      ['not an e-mail', { email: 'not-an-email', password: 'x' }],
      ['an extra property', { email: org.email, password: 'login-route-password', admin: true }],
      ['a number for a password', { email: org.email, password: 12345678901234 }],
      ['an empty password', { email: org.email, password: '' }],
      ['a password over 1024 characters', { email: org.email, password: 'p'.repeat(1025) }],
      ['an array', [org.email, 'login-route-password']],
    ];
    for (const [what, payload] of cases) {
      const res = await gw.pub({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) });
      assertProblem(t, res, 400, 1200, what);
    }
  });

  t.test('no body, malformed JSON, another media type', async (t) => {
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/login' }), 400, 1200, 'no body');
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"email":' }), 400, 1201, 'malformed JSON');
    assertProblem(
      t,
      await gw.pub({ method: 'POST', url: '/auth/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `email=${org.email}&password=x` }),
      415,
      1202,
      'a form body',
    );
  });

  t.test('after the per-pair limit of failed logins: 429 1108 with Retry-After, even with the right password', async (t) => {
    const victim = await gw.createOrganization();
    for (let i = 0; i < 10; i++) {
      const res = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: victim.email, password: `guess-${i}` } });
      t.equal(res.statusCode, 401, `guess ${i} is judged`);
    }
    const refused = await gw.pub({ method: 'POST', url: '/auth/login', payload: { email: victim.email, password: victim.password } });
    const body = assertProblem(t, refused, 429, 1108, 'throttled');
    t.match(refused.headers['retry-after'], /^\d+$/);
    t.ok(Number(refused.headers['retry-after']) >= 1);
    t.match(body.detail, /try again/);
    t.ok(gw.logs.records().some((r) => r['event'] === 'login.throttled'), 'the last judged failure warns once in the log');
  });
});

t.test('POST /auth/logout', async (t) => {
  const gw = await injectGateway(t);
  const { token, apiKey } = await gw.signedUp();

  t.test('with an API key: 403 1103, and the session is untouched', async (t) => {
    assertProblem(t, await gw.pub({ method: 'POST', url: '/auth/logout', headers: { authorization: `Bearer ${apiKey}` } }), 403, 1103);
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } })).statusCode, 200);
  });

  t.test('without a credential: 401 1101', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/logout' });
    assertProblem(t, res, 401, 1101);
    t.equal(res.headers['www-authenticate'], 'Bearer realm="authgate"');
  });

  t.test('with the login token: 204 with no body; the token is refused from then on', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/logout', headers: { authorization: `Bearer ${token}` } });
    t.equal(res.statusCode, 204);
    t.equal(res.body, '');
    const after = await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${token}` } });
    assertProblem(t, after, 401, 1102, 'the logged-out token');
    const again = await gw.pub({ method: 'POST', url: '/auth/logout', headers: { authorization: `Bearer ${token}` } });
    assertProblem(t, again, 401, 1102, 'logging out twice');
    t.equal((await gw.pub({ url: '/auth/api-key', headers: { authorization: `Bearer ${apiKey}` } })).statusCode, 200, 'the API keys live on');
    t.ok(gw.logs.records().some((r) => r['event'] === 'logout'), 'logged');
    t.notOk(gw.logs.text().includes(token), 'the token is never logged');
  });

  t.test('a body on logout is not read before authentication', async (t) => {
    const res = await gw.pub({ method: 'POST', url: '/auth/logout', headers: { 'content-type': 'application/json' }, payload: '{"broken":' });
    assertProblem(t, res, 401, 1101, 'the 401, not the malformed body');
  });
});
