import t from 'tap';
import { eventually, startGateway } from '../helpers/gateway.js';

// Teams test their clients' expiry handling with tokens of a second or two.

t.test('a 1-second token lives at least a second, then is 401 expired (injected clock)', async (t) => {
  // Late in a second: a token whose exp were rounded down would be expired 1 ms after login.
  const issuedAt = Math.floor(Date.now() / 1000) * 1000 + 999;
  let now = issuedAt;
  const gw = await startGateway(t, { env: { AUTHGATE_TOKEN_TTL_SECONDS: '1' }, deps: { now: () => now } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const auth = { authorization: `Bearer ${token}` };
  t.equal((await gw.get('/accounts', auth)).status, 200, 'usable when issued');
  now = issuedAt + 999;
  t.equal((await gw.get('/accounts', auth)).status, 200, 'still usable 999 ms later');
  now = issuedAt + 2000;
  const expired = await gw.get('/accounts', auth);
  t.equal(expired.status, 401, 'expired within the second after its lifetime, though cached');
  t.match(expired.json().detail, /expired/);
});

t.test('a 1-second token expires on the real clock', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_TOKEN_TTL_SECONDS: '1' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const auth = { authorization: `Bearer ${token}` };
  let last = await gw.get('/accounts', auth);
  t.ok(await eventually(async () => (last = await gw.get('/accounts', auth)).status === 401, 15_000, 50), 'turns 401');
  t.match(last.json().detail, /expired/, 'because it expired');
});

t.test('a login token\'s exp - iat is exactly AUTHGATE_TOKEN_TTL_SECONDS (issue 26: it was 3601)', async (t) => {
  let now = Math.floor(Date.now() / 1000) * 1000 + 400; // mid-second, where rounding iat down and exp up differ
  const gw = await startGateway(t, { deps: { now: () => now } });
  const org = await gw.createOrganization();
  for (const ms of [400, 999, 1000]) {
    now = Math.floor(now / 1000) * 1000 + ms;
    const token = await gw.login(org.email, org.password);
    const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { iat: number; exp: number };
    t.equal(payload.exp - payload.iat, 3600, `issued at ms ${ms} of a second`);
  }
});
