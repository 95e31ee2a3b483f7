import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { createAdminTokenCheck } from '../../src/admin/admin-token.js';
import { createAdminRefusalThrottle } from '../../src/guards/admin-refusal-throttle.js';
import { Problem } from '../../src/problems.js';
import { createMemoryStore } from '../../src/store/memory-store.js';

/** admin/admin-token.ts: AUTHGATE_ADMIN_TOKEN as a bearer token, and why a request was refused. */

const TOKEN = 'admin-token-check-0123456789';
const check = createAdminTokenCheck({
  adminToken: TOKEN,
  // Enough for every case here: the limit itself is test/admin/admin-refusals.test.ts's.
  throttle: createAdminRefusalThrottle(createMemoryStore({ now: Date.now }), { perAddress: 1000, windowSeconds: 60 }),
  countRefusal: () => {},
  trail: { record: () => {} },
});
const requestWith = (rawHeaders: string[]) => {
  const headers: Record<string, string> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i]!.toLowerCase()] ??= rawHeaders[i + 1]!;
  return { headers, raw: { rawHeaders }, ip: '192.0.2.1', routeOptions: { url: '/admin/audit' }, log: { warn: () => {} } } as unknown as FastifyRequest;
};
const outcome = (rawHeaders: string[]) => check(requestWith(rawHeaders)).then(() => undefined, (error: unknown) => error);

t.test('the token passes, with the scheme in any case', async (t) => {
  t.equal(await outcome(['Authorization', `Bearer ${TOKEN}`]), undefined);
  t.equal(await outcome(['authorization', `bEARER ${TOKEN}`]), undefined);
});

t.test('anything else is adminTokenInvalid, with a bounded reason', async (t) => {
  const cases: Array<[string, string[], string]> = [
    ['none', [], 'missing'],
    ['another token', ['Authorization', 'Bearer another-token-0123456789'], 'bad_admin_token'],
    ['a longer one', ['Authorization', `Bearer ${TOKEN}0`], 'bad_admin_token'],
    ['Basic', ['Authorization', `Basic ${TOKEN}`], 'not_bearer'],
    ['two Authorization headers', ['Authorization', `Bearer ${TOKEN}`, 'Authorization', `Bearer ${TOKEN}`], 'duplicate'],
    ['a malformed bearer', ['Authorization', `Bearer ${TOKEN} extra`], 'malformed'],
  ];
  for (const [what, raw, reason] of cases) {
    const error = await outcome(raw);
    t.type(error, Problem, what);
    t.match(error, { problem: 'adminTokenInvalid', reason }, what);
    t.notOk((error as Problem).detail?.includes(TOKEN), `${what}: the token is not echoed`);
  }
});
