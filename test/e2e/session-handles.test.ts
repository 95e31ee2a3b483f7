import t from 'tap';
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { audienceOf, keyIdOf } from '../../src/credentials/jwt.js';
import { JWT_SECRET, send, startGateway, UA } from '../helpers/gateway.js';

/**
 * Issue 26: with the (then shipped) JWT secret, a `keys:read` API key read a live session id from
 * GET /auth/sessions and signed a login token for it. A session is now listed by an opaque handle
 * (a digest of its id): it ends the session through the API, but a token made with it names no
 * session. So a leaked JWT secret alone no longer mints working tokens from a listing.
 */

t.test('a session id from GET /auth/sessions cannot be made into a login token, even with the JWT secret', async (t) => {
  const gw = await startGateway(t);
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const reader = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { ...UA, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'reader', scopes: ['keys:read'] }),
  });
  const apiKey = reader.json().apiKey as string;
  const listed = await gw.get('/auth/sessions', { authorization: `Bearer ${apiKey}` });
  t.equal(listed.status, 200);
  const sessions = listed.json().sessions as Array<{ id: string }>;
  t.equal(sessions.length, 1);

  const secret = new TextEncoder().encode(JWT_SECRET);
  const now = Math.floor(Date.now() / 1000);
  const forged = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keyIdOf(JWT_SECRET) })
    .setSubject(sessions[0]!.id)
    .setJti(randomUUID())
    .setIssuer('authgate')
    .setAudience(audienceOf('sandbox'))
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(secret);
  const used = await send(`${gw.publicUrl}/auth/api-key`, {
    method: 'POST',
    headers: { ...UA, authorization: `Bearer ${forged}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'all-scopes' }),
  });
  t.equal(used.status, 401, 'the forged token names no session');

  // The handle still does what the listing is for: ending that session.
  const ended = await send(`${gw.publicUrl}/auth/sessions/${sessions[0]!.id}`, { method: 'DELETE', headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(ended.status, 204);
  t.equal((await gw.get('/auth/api-key', { authorization: `Bearer ${token}` })).status, 401, 'its token is refused');
});
