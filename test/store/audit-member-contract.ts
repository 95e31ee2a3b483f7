/**
 * The audit trail's member filter (issue 50), part of the store contract: both stores read
 * `memberId` as one filter, beside organization and type, paged alike, and match entries written
 * before `actorDetail` by their `member`, or (a login token's without one) as the first member's.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { AuditEvent } from '../../src/store/audit.js';
import { firstMemberId } from '../../src/store/members.js';
import type { GatewayStore } from '../../src/store/store.js';

export function auditMemberContract(t: Test, open: (t: Test) => Promise<GatewayStore>): void {
  t.test('audit: filtered by the member who acted, entries of before included, paged', async (t) => {
    const store = await open(t);
    const orgId = `org_${randomBytes(16).toString('hex')}`;
    const first = firstMemberId(orgId);
    const base = { at: Date.now(), orgId, actor: 'organization' as const, network: '203.0.113.0/24' };
    const events: AuditEvent[] = [
      { ...base, type: 'api_key.created', credential: { kind: 'jwt', id: 'ses_old' }, details: { n: 0 } }, // the first member's, before members
      { ...base, type: 'api_key.created', credential: { kind: 'jwt', id: 'ses_b' }, member: { id: 'mem_b', email: 'b@example.com' }, details: { n: 1 } }, // another's, before actorDetail
      { ...base, type: 'api_key.changed', credential: { kind: 'api_key', id: 'key_1' }, actorDetail: { type: 'api_key', id: 'key_1', createdBy: 'mem_b' }, details: { n: 2 } }, // a key b created: not b
      { ...base, type: 'logout', credential: { kind: 'jwt', id: 'ses_b2' }, member: { id: 'mem_b', email: 'b@example.com' }, actorDetail: { type: 'member', id: 'mem_b', email: 'b@example.com' }, details: { n: 3 } },
      { ...base, type: 'api_key.deleted', credential: { kind: 'jwt', id: 'ses_new' }, actorDetail: { type: 'member', id: first, email: 'o@example.com' }, details: { n: 4 } },
      { ...base, type: 'api_key.deleted', actor: 'admin', actorDetail: { type: 'operator' }, details: { n: 5 } },
      { ...base, type: 'login.succeeded', actor: 'anonymous', member: { id: 'mem_b', email: 'b@example.com' }, actorDetail: { type: 'member', id: 'mem_b', email: 'b@example.com' }, details: { n: 6 } },
    ];
    await store.appendAuditEvents(events, { maxEvents: 10_000, maxAgeMs: 3_600_000 });
    const ns = async (memberId: string, types?: string[]) => (await store.readAuditEvents({ orgId, memberId, limit: 100, ...(types && { types }) })).events.map((e) => e.details?.['n']);
    t.same(await ns('mem_b'), [6, 3, 1], "b's, newest first: by actorDetail, or by member before it");
    t.same(await ns(first), [4, 0], "the first member's: by actorDetail, or a login token's entry without a member");
    t.same(await ns('mem_b', ['logout', 'api_key.created']), [3, 1], 'with a type as well');
    t.same(await ns('mem_nobody'), [], 'an unknown member: none');
    t.same((await store.readAuditEvents({ memberId: 'mem_b', limit: 100 })).events.filter((e) => e.orgId === orgId).map((e) => e.details?.['n']), [6, 3, 1], 'the admin-wide read filters alike');
    const read = await store.readAuditEvents({ orgId, limit: 100 });
    t.same(read.events.find((e) => e.details?.['n'] === 2)?.actorDetail, { type: 'api_key', id: 'key_1', createdBy: 'mem_b' }, 'actorDetail is stored as given');
    const pages: unknown[] = [];
    let before: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await store.readAuditEvents({ orgId, memberId: 'mem_b', limit: 1, ...(before !== undefined && { before }) });
      pages.push(...page.events.map((e) => e.details?.['n']));
      if (page.next === null) break;
      before = page.next;
    }
    t.same(pages, [6, 3, 1], 'paged one by one');
  });
}
