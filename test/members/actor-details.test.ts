import t from 'tap';
import { completeActors } from '../../src/audit/actor-details.js';
import { actorOf, memberById } from '../../src/audit/trail.js';
import type { AuditEvent } from '../../src/store/audit.js';

/**
 * The actor of an entry (issue 50) for what the HTTP tests do not reach: a provider token's, and
 * how the trail completes a batch when the store answers and when it does not (the entry stays,
 * without the part it could not read; never a wrong creator).
 */

t.test("a provider token's entry names the token; an API key's names the key", async (t) => {
  const viaIssuer = actorOf({ principal: { via: 'issuer_token', credentialId: 'corp:user-7' }, ip: '203.0.113.9' });
  t.same(viaIssuer.actorDetail, { type: 'issuer_token', id: 'corp:user-7' });
  t.equal(viaIssuer.actor, 'organization', 'actor stays as before');
  t.same(actorOf({ principal: { via: 'api_key', credentialId: 'key_1' } }).actorDetail, { type: 'api_key', id: 'key_1' }, 'the creator is added when written');
  t.same(actorOf({ principal: null }).actorDetail, { type: 'anonymous' });
});

t.test('the trail completes the actors of a batch, once per organization, and never guesses', async (t) => {
  const orgId = 'org_00000000000000000000000000000001';
  const base = { at: 1, orgId, actor: 'organization' as const };
  const batch: AuditEvent[] = [
    { ...base, type: 'api_key.changed', actorDetail: { type: 'api_key', id: 'key_dev' } },
    { ...base, type: 'api_key.deleted', actorDetail: { type: 'api_key', id: 'key_old' } },
    { ...base, type: 'password.reset', actorDetail: memberById('mem_00000000000000000000000000000001') },
    { ...base, type: 'logout', actorDetail: { type: 'member', id: 'mem_b', email: 'b@example.com' } },
  ];
  let creatorReads = 0;
  const done = await completeActors(batch, {
    keyCreators: async () => (creatorReads++, { key_dev: 'mem_dev' }),
    memberEmail: async () => 'owner@example.com',
  });
  t.same(done.map((e) => e.actorDetail), [
    { type: 'api_key', id: 'key_dev', createdBy: 'mem_dev' },
    { type: 'api_key', id: 'key_old', createdBy: 'mem_00000000000000000000000000000001' },
    { type: 'member', id: 'mem_00000000000000000000000000000001', email: 'owner@example.com' },
    { type: 'member', id: 'mem_b', email: 'b@example.com' },
  ], "a key's creator (the first member for a key of none recorded), a member's e-mail; the rest as given");
  t.equal(creatorReads, 1, "the organization's key creators read once for the batch");

  const failing = await completeActors(batch, { keyCreators: async () => Promise.reject(new Error('down')), memberEmail: async () => Promise.reject(new Error('down')) });
  t.equal(failing.length, batch.length, 'a store that does not answer loses no entry');
  t.same(failing[0]?.actorDetail, { type: 'api_key', id: 'key_dev' }, 'and names no creator it could not read');
});
