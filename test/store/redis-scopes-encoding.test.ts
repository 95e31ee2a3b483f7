/**
 * How the Redis store writes a key's scope names (replies.ts scopesPart) and reads them back
 * (apiKeyReply): a property over random sets of names, the five original ones among them or not.
 * Pure functions: the same forms meet a real Redis in redis-store.test.ts.
 */
import t from 'tap';
import fc from 'fast-check';
import { LEGACY_SCOPES } from '../../src/authz/scopes.js';
import { apiKeyReply, apiKeyValue, scopesPart } from '../../src/store/redis/replies.js';

const ORG = 'org.AAAAAAAAAAAAAAAAAAAAAA';
const KEY = 'key.BBBBBBBBBBBBBBBBBBBBBB';
const segment = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/);
const name = fc.oneof(fc.constantFrom(...LEGACY_SCOPES), fc.tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), segment).map(([resource, action]) => `${resource.join('.')}:${action}`));

t.test('any set of scope names reads back as the same names, sorted; the five original ones as their bit set', async (t) => {
  fc.assert(
    fc.property(fc.array(name, { minLength: 1, maxLength: 8 }), fc.option(fc.integer({ min: 0, max: 36 ** 8 - 1 }), { nil: undefined }), (scopes, expiresAt) => {
      const value = apiKeyValue(ORG, KEY, { scopes, ...(expiresAt !== undefined && { expiresAt }) });
      const read = apiKeyReply('tag.digest', value);
      const expected = [...new Set(scopes)].sort();
      if (JSON.stringify(read?.scopes) !== JSON.stringify(expected) || read?.expiresAt !== expiresAt) return false;
      const legacy = scopes.every((scope) => (LEGACY_SCOPES as readonly string[]).includes(scope));
      // Within a listpack value for expiries of 8 base-36 characters (until 2059).
      return scopesPart(scopes).startsWith(legacy ? '/' : '~') && (!legacy || Buffer.byteLength(value) <= 64);
    }),
    { numRuns: 2000 },
  );
});

t.test('the forms, byte for byte, and what is refused', async (t) => {
  t.equal(scopesPart(['keys:read', 'accounts:read']), '/9', 'bits 0 and 3');
  t.equal(scopesPart([...LEGACY_SCOPES]), '/v', 'all five: 31');
  t.equal(scopesPart(['reports:read', 'keys:read', 'reports:read']), '~keys:read,reports:read', 'sorted, once each, a legacy name spelled out beside another');
  for (const bad of [[], ['a b:c'], ['a,b:c'], ['a~b:c'], ['a/b:c'], ['NoColon']]) t.throws(() => scopesPart(bad), `${JSON.stringify(bad)} refused`);
  for (const malformed of [`${ORG} ${KEY} -/`, `${ORG} ${KEY} -/0`, `${ORG} ${KEY} -/!`, `${ORG} ${KEY} -~`, `${ORG} ${KEY} -~a:b,`, `${ORG} ${KEY} -~A:b`, `${ORG} ${KEY} /9`]) {
    t.throws(() => apiKeyReply('tag.digest', malformed), `${malformed.slice(54)} is malformed`);
  }
});
