import t from 'tap';
import fc from 'fast-check';
import { startGateway } from '../helpers/gateway.js';
import { rawRequest } from '../helpers/raw-http.js';

/**
 * A fuzz run bounded in time (FUZZ_SECONDS, 15 by default): random request lines, headers and
 * bodies, sent as raw bytes. Invariants: no 5xx, nothing unauthenticated at the upstream, no
 * secret echoed, the gateway still answers afterwards.
 */
const seconds = Number(process.env['FUZZ_SECONDS'] ?? 15);

t.test(`fuzz for ${seconds} s`, { timeout: (seconds + 60) * 1000 }, async (t) => {
  const gw = await startGateway(t, { env: { LOG_LEVEL: 'warn' } });
  const org = await gw.createOrganization();
  const token = await gw.login(org.email, org.password);
  const { apiKey } = await gw.createApiKey(token);
  const port = Number(new URL(gw.publicUrl).port);

  const method = fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'get'), fc.stringMatching(/^[A-Z]{1,8}$/));
  const path = fc.oneof(
    fc.constantFrom('/auth/login', '/auth/logout', '/auth/api-key', '/auth/api-key/key_x', '/accounts', '/accounts/x', '/organization/me', '*', 'http://x/accounts'),
    fc.stringMatching(/^\/[ -~]{0,40}$/).map((p) => p.replace(/[\s]/g, '')),
  );
  const headerName = fc.oneof(
    fc.constantFrom('Authorization', 'Content-Type', 'Content-Length', 'Transfer-Encoding', 'Content-Encoding', 'Connection', 'X-Organization-Id', 'X-Forwarded-For', 'User-Agent', 'Expect', 'Host'),
    fc.stringMatching(/^[A-Za-z-]{1,20}$/),
  );
  const headerValue = fc.oneof(
    fc.constantFrom(`Bearer ${apiKey}x`, `Bearer ${token.slice(0, -1)}`, 'application/json', 'text/plain', 'chunked', 'gzip', '0', '-1', '99999999999', 'close, authorization', '100-continue'),
    fc.stringMatching(/^[ -~]{0,80}$/),
  );
  const headers = fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 });
  const body = fc.oneof(fc.constant(''), fc.json({ maxDepth: 4 }), fc.stringMatching(/^[\s\S]{0,300}$/), fc.constant('{"email":"a@b.c","password":"' + 'x'.repeat(2000) + '"}'));

  let runs = 0;
  await fc.assert(
    fc.asyncProperty(method, path, headers, body, fc.boolean(), async (m, p, hs, b, withUa) => {
      runs++;
      gw.upstream.requests.length = 0;
      const lines = [`${m} ${p} HTTP/1.1`, 'Host: gateway.test', 'Connection: close'];
      if (withUa) lines.push('User-Agent: fuzz');
      for (const [name, value] of hs) lines.push(`${name}: ${value}`);
      const res = await rawRequest(port, `${lines.join('\r\n')}\r\n\r\n${b}`, 2000);
      if (res.status >= 500) throw new Error(`${m} ${p} → ${res.status}`);
      if (gw.upstream.requests.length > 0) throw new Error(`${m} ${p} reached the upstream without a valid credential`);
      if (res.raw.includes(token) || res.raw.includes(apiKey)) throw new Error('a secret was echoed');
    }),
    { numRuns: 1_000_000, interruptAfterTimeLimit: seconds * 1000, markInterruptAsFailure: false },
  );
  t.ok(runs > 50, `${runs} random requests without a 5xx, an unauthenticated upstream request or an echoed secret`);
  t.equal((await gw.get('/accounts', { authorization: `Bearer ${apiKey}` })).status, 200, 'the gateway still works');
});
