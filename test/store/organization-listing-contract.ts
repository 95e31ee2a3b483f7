/**
 * The organization listing (issue 27) as both stores keep it: every organization once, ordered by
 * e-mail, a page at a time with an opaque cursor; searched by exact (normalized) e-mail or by a
 * name prefix (case-insensitive, ordered by name); deleted organizations never listed.
 * Called from storeContract, so it runs on memory, Redis, Sentinel and Cluster alike. Other tests
 * share the store, so it checks its own organizations within the whole listing.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';
import type { OrganizationQuery } from '../../src/store/organization-listing.js';

function organization(name: string, email: string): NewOrganization {
  return {
    id: `org_${randomBytes(16).toString('hex')}`,
    name,
    email,
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo',
    createdAt: new Date().toISOString(),
  };
}

async function everyPage(store: GatewayStore, query: Omit<OrganizationQuery, 'cursor'>) {
  const pages: string[][] = [];
  const records: unknown[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10_000; i++) {
    const page = await store.listOrganizations({ ...query, ...(cursor !== undefined && { cursor }) });
    pages.push(page.organizations.map((o) => o.id));
    records.push(...page.organizations);
    if (page.organizations.length > query.limit) throw new Error('a page longer than its limit');
    if (page.nextCursor === null) return { pages, ids: pages.flat(), records };
    cursor = page.nextCursor;
  }
  throw new Error('the listing never ended');
}

export function organizationListingContract(t: Test, open: (t: Test) => Promise<GatewayStore>): void {
  t.test('organizations: listed by e-mail a page at a time, searched by e-mail or name prefix', async (t) => {
    const store = await open(t);
    const run = randomBytes(6).toString('hex');
    const orgs = [
      organization(`Zeta ${run}`, `a-${run}@example.com`),
      organization(`alpha ${run} one`, `c-${run}@example.com`),
      organization(`Alpha ${run} two`, `b-${run}@example.com`),
      organization(`Beta ${run}`, `e-${run}@example.com`),
      organization(`alphabet ${run}`, `d-${run}@example.com`),
    ];
    for (const org of orgs) t.strictSame(await store.createOrganizationIfEmailFree(org), org);
    const gone = organization(`Alpha ${run} gone`, `bb-${run}@example.com`);
    await store.createOrganizationIfEmailFree(gone);
    t.ok(await store.deleteOrganization(gone.id), 'one deleted');

    const byEmail = [...orgs].sort((x, y) => (x.email < y.email ? -1 : 1)).map((o) => o.id);
    const all = await everyPage(store, { limit: 2 });
    t.equal(new Set(all.ids).size, all.ids.length, 'every organization once');
    t.strictSame(all.ids.filter((id) => byEmail.includes(id)), byEmail, 'ours, in e-mail order');
    t.notOk(all.ids.includes(gone.id), 'a deleted organization is not listed');
    t.ok(all.pages.slice(0, -1).every((p) => p.length === 2), 'full pages but the last');

    const emails = (all.records as { email: string }[]).map((o) => o.email);
    t.strictSame(emails, [...emails].sort(), 'the whole listing is in e-mail order');
    t.strictSame(all.records.find((o) => (o as { id: string }).id === orgs[0]!.id), orgs[0], 'each listed with its record as stored');

    const prefix = await everyPage(store, { limit: 2, namePrefix: `ALPHA ${run}` });
    t.strictSame(prefix.ids, [orgs[1]!.id, orgs[2]!.id], 'a name prefix, case-insensitive, in name order, not the deleted one');
    const wider = await everyPage(store, { limit: 1, namePrefix: 'alpha' });
    for (const org of [orgs[1]!, orgs[2]!, orgs[4]!]) t.ok(wider.ids.includes(org.id), `"alpha" finds ${org.name}`);
    t.notOk(wider.ids.includes(orgs[0]!.id), 'and not Zeta');
    t.strictSame((await everyPage(store, { limit: 5, namePrefix: `nothing-${run}` })).ids, [], 'no match: an empty page');

    const found = await store.listOrganizations({ limit: 10, email: `b-${run}@example.com` });
    t.strictSame(found, { organizations: [orgs[2]], nextCursor: null }, 'an exact e-mail');
    t.strictSame((await store.listOrganizations({ limit: 10, email: `bb-${run}@example.com` })).organizations, [], 'a deleted one\'s e-mail finds nothing');
    t.strictSame((await store.listOrganizations({ limit: 10, email: `${run}@example.com` })).organizations, [], 'not a prefix or part of one');
  });
}
