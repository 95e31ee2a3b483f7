/** Shared steps of the members tests (issue 50): an organization with one member of each role. */
import type { Test } from 'tap';
import type { InjectedGateway } from '../helpers/inject.js';
import type { MemberRole } from '../../src/store/members.js';

export const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

let counter = 0;

/** Invites `email` with `role` as `inviterToken` (on gw), and accepts on `acceptOn`: the new member's login token. */
export async function invite(t: Test, gw: InjectedGateway, inviterToken: string, role: MemberRole, acceptOn: InjectedGateway = gw) {
  const email = `member-${++counter}-${process.pid}@example.test`;
  const invited = await gw.pub({ method: 'POST', url: '/auth/invitations', headers: bearer(inviterToken), payload: { email, role } });
  t.equal(invited.statusCode, 201, `invited as ${role}`);
  const { token: invitation, id } = invited.json<{ token: string; id: string }>();
  const password = `member-password-${counter}-long-enough`;
  const accepted = await acceptOn.pub({ method: 'POST', url: '/auth/invitations/accept', payload: { token: invitation, password } });
  t.equal(accepted.statusCode, 200, `accepted as ${role}`);
  const members = (await gw.pub({ url: '/auth/members', headers: bearer(inviterToken) })).json<{ members: Array<{ id: string; email: string; role: string }> }>().members;
  const member = members.find((m) => m.email === email)!;
  return { email, password, invitationId: id, memberId: member.id, token: accepted.json<{ token: string }>().token };
}

/** An organization created the old way (admin API), its owner logged in, and one member per other role. */
export async function team(t: Test, gw: InjectedGateway) {
  const org = await gw.createOrganization();
  const owner = await gw.login(org.email, org.password);
  const admin = await invite(t, gw, owner, 'admin');
  const developer = await invite(t, gw, owner, 'developer');
  const viewer = await invite(t, gw, owner, 'viewer');
  return { org, tokens: { owner, admin: admin.token, developer: developer.token, viewer: viewer.token }, admin, developer, viewer };
}
