/**
 * Listing organizations for the admin API (GET /admin/organizations): what both stores answer,
 * and the order and cursor they share. Kept apart from store.ts, like the audit trail and the rate
 * limits, so the listing is one module per store.
 *
 * Order: by e-mail (normalized, so unique); with a name prefix, by lower-cased name, then id. A
 * place in either order is one string, `<sort key>\0<id>`, and the cursor is that string of the
 * page's last organization, base64url-encoded: the next page starts after it, so organizations
 * created or deleted between pages neither repeat nor shift the rest.
 */
import type { Organization } from './store.js';

export type OrganizationQuery = Readonly<{
  /** 1 to 500. */
  limit: number;
  /** A page's nextCursor: the next page of the same query. */
  cursor?: string;
  /** Only the organization with this e-mail (normalized by the caller). */
  email?: string;
  /** Only organizations whose name starts with this, compared lower-cased. */
  namePrefix?: string;
}>;

export type OrganizationPage = Readonly<{ organizations: Organization[]; nextCursor: string | null }>;

export interface OrganizationListing {
  listOrganizations(query: OrganizationQuery): Promise<OrganizationPage>;
}

/** A cursor that does not decode to a place: the caller answers 400. */
export class BadOrganizationCursor extends Error {
  constructor() {
    super('not a cursor of this listing');
    this.name = 'BadOrganizationCursor';
  }
}

export const nameKey = (name: string): string => name.toLowerCase();

/** The organization's place in the listing's order: by e-mail, or by name under a name prefix. */
export function placeOf(org: Pick<Organization, 'id' | 'name' | 'email'>, byName: boolean): string {
  return `${byName ? nameKey(org.name) : org.email}\0${org.id}`;
}

export function idOfPlace(place: string): string {
  return place.slice(place.lastIndexOf('\0') + 1);
}

export function encodeCursor(place: string): string {
  return Buffer.from(place, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const place = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!place.includes('\0') || encodeCursor(place) !== cursor) throw new BadOrganizationCursor();
  return place;
}

/** Compares places as Redis compares ZSET members by lex: by their UTF-8 bytes. */
export function comparePlaces(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The memory store's listing: every organization it holds, filtered, ordered and paged. */
export function listOrganizationsIn(all: Iterable<Organization>, query: OrganizationQuery): OrganizationPage {
  const byName = query.namePrefix !== undefined;
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const prefix = query.namePrefix === undefined ? undefined : nameKey(query.namePrefix);
  const matching: { place: string; org: Organization }[] = [];
  for (const org of all) {
    if (query.email !== undefined && org.email !== query.email) continue;
    if (prefix !== undefined && !nameKey(org.name).startsWith(prefix)) continue;
    const place = placeOf(org, byName);
    if (after !== undefined && comparePlaces(place, after) <= 0) continue;
    matching.push({ place, org });
  }
  matching.sort((a, b) => comparePlaces(a.place, b.place));
  const page = matching.slice(0, query.limit);
  const more = matching.length > query.limit;
  return { organizations: page.map((m) => m.org), nextCursor: more ? encodeCursor(page.at(-1)!.place) : null };
}
