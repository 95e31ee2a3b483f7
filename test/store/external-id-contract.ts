/**
 * The external-id part of the store contract (store/external-ids.ts, issue 49): run by
 * storeContract on memory, standalone Redis, Sentinel and Cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { GatewayStore, NewOrganization } from '../../src/store/store.js';

export function externalIdContract(t: Test, open: (t: Test) => Promise<GatewayStore>, newOrganization: () => NewOrganization): void {
  t.test('external ids: set, found, unique per issuer across the store, changed, removed, gone with the organization', async (t) => {
    const store = await open(t);
    const [org, other] = [newOrganization(), newOrganization()];
    for (const o of [org, other]) await store.createOrganizationIfEmailFree(o);
    const id = `org_${randomUUID()}`;
    // Braces and colons in an id: its own shard tag must not be taken from it.
    const odd = `{x}:${randomUUID()}`;

    t.strictSame(await store.setExternalIds(org.id, { corp: id, partner: odd }), { corp: id, partner: odd });
    t.equal(await store.findOrganizationIdByExternalId('corp', id), org.id);
    t.equal(await store.findOrganizationIdByExternalId('partner', odd), org.id);
    t.equal(await store.findOrganizationIdByExternalId('partner', id), undefined, 'per issuer');
    t.strictSame(await store.setExternalIds(other.id, { partner: id }), { partner: id }, 'the same id at another issuer is another organization\'s');
    t.strictSame(await store.setExternalIds(other.id, { corp: id, partner: null }), { takenAt: 'corp' }, 'taken at this issuer');
    t.strictSame(await store.readExternalIds(other.id), { partner: id }, 'nothing of a refused change kept');
    t.strictSame(await store.setExternalIds(org.id, { corp: id }), { corp: id, partner: odd }, 'setting its own again');

    const moved = `org_${randomUUID()}`;
    t.strictSame(await store.setExternalIds(org.id, { corp: moved, partner: null }), { corp: moved });
    t.equal(await store.findOrganizationIdByExternalId('corp', id), undefined, 'the old id names nothing');
    t.equal(await store.findOrganizationIdByExternalId('partner', odd), undefined, 'a removed id names nothing');
    t.strictSame(await store.setExternalIds(other.id, { corp: id }), { corp: id, partner: id }, 'a released id may be taken');

    t.equal(await store.setExternalIds(`org_${randomUUID()}`, { corp: 'x' }), 'not-found');
    await store.deleteOrganization(org.id);
    t.equal(await store.findOrganizationIdByExternalId('corp', moved), undefined, 'gone with the organization');
    t.strictSame(await store.readExternalIds(org.id), {});
    t.strictSame(await store.setExternalIds(other.id, { corp: moved }), { corp: moved, partner: id }, 'a deleted organization\'s id may be taken');
    t.equal(await store.findOrganizationIdByExternalId('corp', moved), other.id);
  });
}
