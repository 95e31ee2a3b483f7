import t from 'tap';
import { SignJWT, generateKeyPair, type JWTPayload } from 'jose';
import { audienceOf, createTokenService, keyIdOf, type TokenSettings } from '../../src/credentials/jwt.js';

const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
const OTHER_SECRET = 'another-secret-0123456789-abcdefghijklmnopqrstuv';
const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);

const settings = (over: Partial<TokenSettings> = {}): TokenSettings => ({
  secret: SECRET,
  previousSecrets: [],
  issuer: 'authgate',
  ttlSeconds: 3600,
  environment: 'production',
  ...over,
});

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decode = (segment: string) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

/** A token like the gateway's, built by hand with jose, with any header, claims and key. */
async function forge(opts: {
  alg?: string;
  kid?: string | undefined;
  secret?: string;
  claims?: JWTPayload;
  iatSeconds?: number;
  expSeconds?: number;
}): Promise<string> {
  const iat = opts.iatSeconds ?? Math.floor(NOW / 1000);
  const header: { alg: string; typ: string; kid?: string } = { alg: opts.alg ?? 'HS256', typ: 'JWT' };
  const kid = 'kid' in opts ? opts.kid : keyIdOf(opts.secret ?? SECRET);
  if (kid !== undefined) header.kid = kid;
  return new SignJWT({ sub: 'sess_forged', jti: 'j', iss: 'authgate', aud: audienceOf('production'), ...opts.claims })
    .setProtectedHeader(header)
    .setIssuedAt(iat)
    .setExpirationTime(opts.expSeconds ?? iat + 3600)
    .sign(new TextEncoder().encode(opts.secret ?? SECRET));
}

t.test('sign then verify round trip', async (t) => {
  const tokens = await createTokenService(settings());
  t.equal(tokens.ttlSeconds, 3600);
  const { token, expiresAtMs } = await tokens.sign('sess_123', NOW);
  t.equal(expiresAtMs, NOW + 3600 * 1000);
  t.same(await tokens.verify(token, NOW), { ok: true, sessionId: 'sess_123', expiresAtMs });
  t.same(await tokens.verify(token, expiresAtMs - 1000), { ok: true, sessionId: 'sess_123', expiresAtMs });
  // A hand-built token with the same secret, kid and claims is accepted too: the checks below
  // that reject variants of it are rejecting the variation, not the forging.
  t.same(await tokens.verify(await forge({}), NOW), { ok: true, sessionId: 'sess_forged', expiresAtMs: NOW + 3600 * 1000 });
});

t.test('a token lives at least its TTL, whatever the millisecond it was issued at', async (t) => {
  const tokens = await createTokenService(settings({ ttlSeconds: 1 }));
  for (const issuedAt of [NOW, NOW + 1, NOW + 500, NOW + 999]) {
    const { token, expiresAtMs } = await tokens.sign('sess_short', issuedAt);
    t.ok(expiresAtMs >= issuedAt + 1000 && expiresAtMs < issuedAt + 2000, `issued at +${issuedAt - NOW} ms: expires within [1 s, 2 s)`);
    t.equal((await tokens.verify(token, issuedAt + 999)).ok, true, 'valid 999 ms later');
    t.same(await tokens.verify(token, issuedAt + 2000), { ok: false, reason: 'expired' }, 'expired 2 s later');
  }
});

t.test('exp - iat is exactly the TTL, whatever the millisecond it was issued at (issue 26)', async (t) => {
  for (const ttlSeconds of [1, 3600]) {
    const tokens = await createTokenService(settings({ ttlSeconds }));
    for (const issuedAt of [NOW, NOW + 1, NOW + 500, NOW + 999]) {
      const { token, expiresAtMs } = await tokens.sign('sess_exact', issuedAt);
      const payload = decode(token.split('.')[1]!);
      t.equal(payload.exp - payload.iat, ttlSeconds, `ttl ${ttlSeconds}, issued at +${issuedAt - NOW} ms`);
      t.equal(expiresAtMs, payload.exp * 1000);
      t.ok(payload.iat * 1000 - issuedAt < 1000 && payload.iat * 1000 >= issuedAt, 'iat is the issue time rounded up to its second');
    }
  }
});

t.test('the token carries only sub, jti, iss, aud, iat, exp; HS256 with a kid', async (t) => {
  const tokens = await createTokenService(settings({ ttlSeconds: 600 }));
  const { token } = await tokens.sign('sess_abc', NOW);
  const [h, p, s] = token.split('.');
  t.ok(h && p && s, 'three segments');
  const header = decode(h!);
  const payload = decode(p!);
  t.same(Object.keys(payload).sort(), ['aud', 'exp', 'iat', 'iss', 'jti', 'sub']);
  t.equal(payload.sub, 'sess_abc');
  t.equal(payload.iss, 'authgate');
  t.equal(payload.aud, 'authgate:production');
  t.equal(payload.iat, Math.floor(NOW / 1000));
  t.equal(payload.exp, Math.floor(NOW / 1000) + 600);
  t.match(payload.jti, /^[0-9a-f-]{36}$/);
  for (const forbidden of ['org', 'orgId', 'org_id', 'email', 'name']) t.notOk(forbidden in payload, `no ${forbidden}`);
  t.equal(header.alg, 'HS256');
  t.equal(header.kid, keyIdOf(SECRET));
  t.equal(typeof header.kid, 'string');
  t.notOk(header.kid.includes(SECRET));
  // Each token has its own jti.
  const again = await tokens.sign('sess_abc', NOW);
  t.not(decode(again.token.split('.')[1]!).jti, payload.jti);
});

t.test('an expired token is expired', async (t) => {
  const tokens = await createTokenService(settings());
  const { token, expiresAtMs } = await tokens.sign('sess_1', NOW);
  t.same(await tokens.verify(token, expiresAtMs + 1000), { ok: false, reason: 'expired' });
  t.same(await tokens.verify(token, expiresAtMs), { ok: false, reason: 'expired' });
  t.same(await tokens.verify(token, NOW + 365 * 86_400_000), { ok: false, reason: 'expired' });
  // Only a genuine token may say it is expired: the signature is checked first.
  const forgedExpired = await forge({ secret: OTHER_SECRET, kid: keyIdOf(SECRET), expSeconds: Math.floor(NOW / 1000) - 60 });
  t.same(await tokens.verify(forgedExpired, NOW), { ok: false, reason: 'invalid' });
});

t.test('tokens not made by this service are invalid', async (t) => {
  const tokens = await createTokenService(settings());
  const invalid = { ok: false, reason: 'invalid' };
  const { token } = await tokens.sign('sess_1', NOW);
  const [h, p, s] = token.split('.') as [string, string, string];

  t.test('wrong issuer', async (t) => {
    t.same(await tokens.verify(await forge({ claims: { iss: 'someone-else' } }), NOW), invalid);
    const otherIssuer = await createTokenService(settings({ issuer: 'other' }));
    t.same(await otherIssuer.verify(token, NOW), invalid);
  });

  t.test('an audience of no known environment', async (t) => {
    t.same(await tokens.verify(await forge({ claims: { aud: 'authgate:staging' } }), NOW), invalid);
    t.same(await tokens.verify(await forge({ claims: { aud: 'something' } }), NOW), invalid);
    t.same(await tokens.verify(await forge({ claims: { aud: ['authgate:staging'] } }), NOW), invalid);
  });

  t.test('tampered payload', async (t) => {
    const payload = decode(p);
    t.same(await tokens.verify(`${h}.${b64({ ...payload, sub: 'sess_other' })}.${s}`, NOW), invalid);
    t.same(await tokens.verify(`${h}.${b64({ ...payload, exp: payload.exp + 86_400 })}.${s}`, NOW), invalid);
  });

  t.test('tampered signature', async (t) => {
    const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
    t.same(await tokens.verify(`${h}.${p}.${flipped}`, NOW), invalid);
    t.same(await tokens.verify(`${h}.${p}.`, NOW), invalid);
    t.same(await tokens.verify(`${h}.${p}`, NOW), invalid);
    t.same(await tokens.verify(`${h}.${p}.${s.slice(0, -4)}`, NOW), invalid);
  });

  t.test('alg none, in any case', async (t) => {
    const payload = decode(p);
    for (const alg of ['none', 'NONE', 'None', 'nOnE']) {
      t.same(await tokens.verify(`${b64({ alg })}.${b64(payload)}.`, NOW), invalid, alg);
      t.same(await tokens.verify(`${b64({ alg, typ: 'JWT', kid: keyIdOf(SECRET) })}.${b64(payload)}.`, NOW), invalid, `${alg} with kid`);
      t.same(await tokens.verify(`${b64({ alg, kid: keyIdOf(SECRET) })}.${b64(payload)}.${s}`, NOW), invalid, `${alg} with a signature`);
    }
  });

  t.test('HS512 signed with the same secret', async (t) => {
    t.same(await tokens.verify(await forge({ alg: 'HS512' }), NOW), invalid);
    t.same(await tokens.verify(await forge({ alg: 'HS384' }), NOW), invalid);
  });

  t.test('a foreign kid, or none', async (t) => {
    t.same(await tokens.verify(await forge({ kid: 'foreign-kid' }), NOW), invalid);
    t.same(await tokens.verify(await forge({ kid: keyIdOf(OTHER_SECRET) }), NOW), invalid);
    t.same(await tokens.verify(await forge({ kid: undefined }), NOW), invalid);
  });

  t.test('another secret with our kid copied', async (t) => {
    t.same(await tokens.verify(await forge({ secret: OTHER_SECRET, kid: keyIdOf(SECRET) }), NOW), invalid);
  });

  t.test('a far-future exp with a bad signature', async (t) => {
    const far = Math.floor(NOW / 1000) + 100 * 365 * 86_400;
    t.same(await tokens.verify(await forge({ secret: OTHER_SECRET, kid: keyIdOf(SECRET), expSeconds: far }), NOW), invalid);
    const payload = decode(p);
    t.same(await tokens.verify(`${h}.${b64({ ...payload, exp: far })}.${s}`, NOW), invalid);
  });

  t.test('RS256 with a key pair', async (t) => {
    const { privateKey } = await generateKeyPair('RS256');
    const rs = await new SignJWT({ sub: 'sess_rs', iss: 'authgate', aud: audienceOf('production') })
      .setProtectedHeader({ alg: 'RS256', kid: keyIdOf(SECRET) })
      .setIssuedAt(Math.floor(NOW / 1000))
      .setExpirationTime(Math.floor(NOW / 1000) + 3600)
      .sign(privateKey);
    t.same(await tokens.verify(rs, NOW), invalid);
  });

  t.test('garbage', async (t) => {
    for (const garbage of ['', 'x', 'a.b.c', '...', 'eyJ.eyJ.eyJ', 'agk_live_nope']) {
      t.same(await tokens.verify(garbage, NOW), invalid, JSON.stringify(garbage));
    }
  });

  t.test('missing sub or exp', async (t) => {
    const iat = Math.floor(NOW / 1000);
    const noSub = await new SignJWT({ iss: 'authgate', aud: audienceOf('production') })
      .setProtectedHeader({ alg: 'HS256', kid: keyIdOf(SECRET) })
      .setIssuedAt(iat)
      .setExpirationTime(iat + 3600)
      .sign(new TextEncoder().encode(SECRET));
    t.same(await tokens.verify(noSub, NOW), invalid);
    const noExp = await new SignJWT({ sub: 'sess_x', iss: 'authgate', aud: audienceOf('production') })
      .setProtectedHeader({ alg: 'HS256', kid: keyIdOf(SECRET) })
      .setIssuedAt(iat)
      .sign(new TextEncoder().encode(SECRET));
    t.same(await tokens.verify(noExp, NOW), invalid);
  });
});

t.test('a token of the other environment with the same secret is wrong_environment', async (t) => {
  const production = await createTokenService(settings({ environment: 'production' }));
  const sandbox = await createTokenService(settings({ environment: 'sandbox' }));
  const fromSandbox = await sandbox.sign('sess_sb', NOW);
  const fromProduction = await production.sign('sess_pr', NOW);
  t.same(await production.verify(fromSandbox.token, NOW), { ok: false, reason: 'wrong_environment', environment: 'sandbox' });
  t.same(await sandbox.verify(fromProduction.token, NOW), { ok: false, reason: 'wrong_environment', environment: 'production' });
  t.equal(decode(fromSandbox.token.split('.')[1]!).aud, 'authgate:sandbox');
  // Only a genuine signature may say which environment a token is from.
  const forged = await forge({ secret: OTHER_SECRET, kid: keyIdOf(SECRET), claims: { aud: audienceOf('sandbox') } });
  t.same(await production.verify(forged, NOW), { ok: false, reason: 'invalid' });
});

t.test('key rotation: previous secrets still verify, others do not', async (t) => {
  const oldService = await createTokenService(settings({ secret: SECRET }));
  const oldToken = (await oldService.sign('sess_old', NOW)).token;
  const rotated = await createTokenService(settings({ secret: OTHER_SECRET, previousSecrets: [SECRET] }));
  t.same(await rotated.verify(oldToken, NOW), { ok: true, sessionId: 'sess_old', expiresAtMs: NOW + 3600 * 1000 });

  const newToken = (await rotated.sign('sess_new', NOW)).token;
  t.equal(decode(newToken.split('.')[0]!).kid, keyIdOf(OTHER_SECRET), 'the new secret signs');
  t.same(await rotated.verify(newToken, NOW), { ok: true, sessionId: 'sess_new', expiresAtMs: NOW + 3600 * 1000 });
  t.same(await oldService.verify(newToken, NOW), { ok: false, reason: 'invalid' }, 'the old service does not know the new key');

  const stranger = await createTokenService(settings({ secret: 'stranger-secret-0123456789-abcdefghijklmnopq' }));
  const strangerToken = (await stranger.sign('sess_x', NOW)).token;
  t.same(await rotated.verify(strangerToken, NOW), { ok: false, reason: 'invalid' });

  // Once dropped from the ring, the old secret no longer verifies.
  const dropped = await createTokenService(settings({ secret: OTHER_SECRET, previousSecrets: [] }));
  t.same(await dropped.verify(oldToken, NOW), { ok: false, reason: 'invalid' });
});
