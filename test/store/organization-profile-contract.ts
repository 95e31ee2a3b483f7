/**
 * The profile part of the store contract (store/organization-profiles.ts): run by storeContract on
 * memory, standalone Redis, Sentinel and Cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { GatewayStore, NewOrganization, Revoked, Session } from '../../src/store/store.js';

type Helpers = { newOrganization: (overrides?: Partial<NewOrganization>) => NewOrganization; newSession: (orgId: string) => Session };

const sorted = (revoked: readonly Revoked[]) => revoked.map((r) => `${r.kind} ${r.cacheKey}`).sort();

export function organizationProfileContract(t: Test, open: (t: Test) => Promise<GatewayStore>, helpers: Helpers): void {
  const { newOrganization, newSession } = helpers;
  t.test('profiles: a change sets name and e-mail, ends the other sessions on an e-mail change only, and says what it revoked', async (t) => {
    const store = await open(t);
    const org = newOrganization();
    const other = newOrganization();
    await store.createOrganizationIfEmailFree(org);
    await store.createOrganizationIfEmailFree(other);
    const [kept, ended] = [newSession(org.id), newSession(org.id)];
    const otherSession = newSession(other.id);
    for (const session of [kept, ended, otherSession]) t.equal(await store.createSession(session), 'created');

    const renamed = await store.changeOrganizationProfile(org.id, { name: 'Renamed', keepSessionId: kept.id });
    t.match(renamed, { organization: { id: org.id, name: 'Renamed', email: org.email, passwordHash: org.passwordHash }, previous: { name: org.name, email: org.email } });
    t.strictSame(sorted(typeof renamed === 'object' ? renamed.revoked : []), [`profile ${org.id}`], 'a name change: the profile only');
    t.ok(await store.findSession(ended.id), 'no session ended');

    const email = `moved-${randomUUID()}@example.com`;
    const moved = await store.changeOrganizationProfile(org.id, { email, keepSessionId: kept.id });
    t.strictSame(sorted(typeof moved === 'object' ? moved.revoked : []), [`profile ${org.id}`, `session ${ended.id}`], 'an e-mail change: the profile and the other sessions');
    t.ok(await store.findSession(kept.id), "the caller's session stays");
    t.equal(await store.findSession(ended.id), undefined, 'the other one ended');
    t.ok(await store.findSession(otherSession.id), "another organization's stays");
    t.match(await store.findOrganizationByEmail(email), { id: org.id, name: 'Renamed', email });
    t.equal(await store.findOrganizationByEmail(org.email), undefined, 'the old e-mail finds nothing');
    t.match(await store.findOrganizationById(org.id), { name: 'Renamed', email });

    t.equal(await store.changeOrganizationProfile(org.id, { email: other.email }), 'email-taken');
    t.match(await store.findOrganizationById(org.id), { email }, 'a refused change changes nothing');
    t.equal(await store.changeOrganizationProfile(`org_${'0'.repeat(32)}`, { name: 'x' }), undefined, 'no such organization');
    const same = await store.changeOrganizationProfile(org.id, { email, keepSessionId: kept.id });
    t.strictSame(sorted(typeof same === 'object' ? same.revoked : []), [`profile ${org.id}`], 'its own e-mail again: no change, no session ends');
    t.equal(await store.createOrganizationIfEmailFree(newOrganization({ email: org.email })) !== 'email-taken', true, 'the old e-mail is free for a sign-up');
    t.equal(await store.createOrganizationIfEmailFree(newOrganization({ email })), 'email-taken', 'the new one is taken');
    const { organizations } = await store.listOrganizations({ limit: 10, email });
    t.match(organizations, [{ id: org.id, name: 'Renamed' }], 'listed by its new e-mail');
    const byName = await store.listOrganizations({ limit: 10, namePrefix: 'Renamed' });
    t.ok(byName.organizations.some((o) => o.id === org.id), 'and by its new name');
  });

  t.test('profiles: racing changes and sign-ups for one e-mail: exactly one winner', async (t) => {
    const store = await open(t);
    for (let round = 0; round < 10; round++) {
      const email = `contested-${randomUUID()}@example.com`;
      const orgs = [newOrganization(), newOrganization()];
      for (const org of orgs) await store.createOrganizationIfEmailFree(org);
      const results = await Promise.all([
        ...orgs.map((org) => store.changeOrganizationProfile(org.id, { email })),
        store.createOrganizationIfEmailFree(newOrganization({ email })),
      ]);
      t.equal(results.filter((r) => typeof r === 'object').length, 1, `round ${round}: one winner (${results.map((r) => (typeof r === 'object' ? 'won' : r)).join(', ')})`);
      const holder = await store.findOrganizationByEmail(email);
      t.ok(holder, 'the e-mail finds the winner');
      for (const [i, org] of orgs.entries()) {
        const won = typeof results[i] === 'object';
        t.equal((await store.findOrganizationByEmail(org.email))?.id, won ? undefined : org.id, `round ${round}: a loser's old e-mail still finds it, the winner's not`);
        if (won) t.equal(holder?.id, org.id);
      }
    }
  });
}
