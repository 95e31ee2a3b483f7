// The members page (issue 50): the organization's members (GET /auth/members), and for an owner or
// admin: invite with a role (POST /auth/invitations, the token shown once), the pending
// invitations (GET, DELETE /auth/invitations), change a role (PATCH) and remove a member (DELETE),
// each after a confirmation. An admin is offered nothing about owners (member.ts `may`).
import { call } from './api.js';
import { h, replaceChildren, when } from './dom.js';
import { run, showDone, statusArea } from './feedback.js';
import { codeOf, field, isBadInput, submit } from './fields.js';
import { may, type Role, type SignedInMember } from './member.js';
import { secretPanel } from './secret.js';

type Member = Readonly<{ id: string; email: string; role: Role; createdAt: string; first: boolean }>;
type Invitation = Readonly<{ id: string; email: string; role: Role; createdAt: string; expiresAt: string }>;
type Issued = Invitation & Readonly<{ token: string }>;

const ROLES: readonly (readonly [Role, string])[] = [
  ['owner', 'Owner: everything, members and the organization included'],
  ['admin', 'Admin: keys, sessions and members, never an owner'],
  ['developer', 'Developer: creates keys, manages the ones it created'],
  ['viewer', 'Viewer: reads, changes nothing'],
];
const EMAIL_TAKEN = 1303;

/** The roles this member may hand out, as options (the current one chosen); described in the invite form, by name in a row. */
function roleOptions(member: SignedInMember | undefined, chosen: Role, described: boolean): HTMLOptionElement[] {
  return ROLES.filter(([role]) => may.manageRole(member, role)).map(([role, label]) => h('option', { value: role, selected: role === chosen }, described ? label : role));
}

/** The link an invitee opens: this console, the token in the fragment (never sent to a server). */
export const invitationLink = (token: string) => `${location.origin}${location.pathname}#invitation=${encodeURIComponent(token)}`;

export function membersPage(member: SignedInMember | undefined): HTMLElement {
  const manages = may.manageMembers(member);
  const secretSlot = h('div');
  const membersBody = h('tbody');
  const invitationsBody = h('tbody');
  const listStatus = statusArea();
  const reload = h('button', { type: 'button' }, 'Reload');

  async function load(): Promise<void> {
    const answer = await run(reload, listStatus, async () => ({
      members: (await call<{ members: Member[] }>('GET', '/auth/members')).members,
      // Only owners and admins read invitations: anyone else would be refused (403).
      invitations: manages ? (await call<{ invitations: Invitation[] }>('GET', '/auth/invitations')).invitations : [],
    }));
    if (answer === undefined) return;
    replaceChildren(membersBody, ...answer.members.map(memberRow));
    replaceChildren(invitationsBody, ...(answer.invitations.length === 0 ? [h('tr', {}, h('td', { colspan: 5 }, 'No pending invitations.'))] : answer.invitations.map(invitationRow)));
  }
  reload.addEventListener('click', () => void load());

  /** A row's action after a confirmation: the question, "Yes, …" and Cancel in place of the buttons. */
  function confirmIn(actions: HTMLElement, rowStatus: HTMLElement, question: string, yes: string, label: string, action: () => Promise<unknown>, idle: () => void, done: string): void {
    const confirm = h('button', { type: 'button', class: 'danger', 'aria-label': `${yes}: ${label}` }, yes);
    confirm.addEventListener('click', async () => {
      const finished = await run(confirm, rowStatus, () => action().then(() => true));
      if (finished !== true) return;
      await load();
      showDone(listStatus, done);
    });
    replaceChildren(actions, h('span', {}, `${question} `), confirm, h('button', { type: 'button', onclick: idle }, 'Cancel'), rowStatus);
    confirm.focus();
  }

  function memberRow(row: Member): HTMLTableRowElement {
    const actions = h('td', { class: 'actions' });
    const rowStatus = statusArea();
    const path = `/auth/members/${encodeURIComponent(row.id)}`;
    const role = h('select', { id: `role-${row.id}`, 'aria-label': `Role of ${row.email}` }, ...roleOptions(member, row.role, false));
    const change = h('button', { type: 'button', 'aria-label': `Change the role of ${row.email}` }, 'Change role');
    const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${row.email}` }, 'Remove');
    const idle = () => {
      role.value = row.role;
      replaceChildren(actions, role, change, remove, rowStatus);
    };
    change.addEventListener('click', () => {
      const to = role.value as Role;
      if (to === row.role) return;
      confirmIn(actions, rowStatus, `Make ${row.email} ${to === 'admin' || to === 'owner' ? 'an' : 'a'} ${to}? Their sessions end: they sign in again.`, 'Yes, change role', row.email,
        () => call('PATCH', path, { role: to }), idle, `${row.email} is now ${to === 'admin' || to === 'owner' ? 'an' : 'a'} ${to}.`);
    });
    remove.addEventListener('click', () => {
      confirmIn(actions, rowStatus, `Remove ${row.email}? Their sessions end at once; the keys they created stay, listed with them as creator.`, 'Yes, remove', row.email,
        () => call('DELETE', path), idle, `Removed ${row.email}: their sessions have ended.`);
    });
    if (manages && may.manageRole(member, row.role)) idle();
    else replaceChildren(actions, h('span', { class: 'muted' }, 'None for your role'));
    return h(
      'tr',
      {},
      h('td', {}, row.email, row.id === member?.id ? h('strong', {}, ' (you)') : null, row.first ? h('span', { class: 'muted' }, ' (first member)') : null),
      h('td', {}, row.role),
      h('td', {}, when(row.createdAt)),
      actions,
    );
  }

  function invitationRow(invitation: Invitation): HTMLTableRowElement {
    const actions = h('td', { class: 'actions' });
    const rowStatus = statusArea();
    const revoke = h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke the invitation of ${invitation.email}` }, 'Revoke');
    const idle = () => replaceChildren(actions, revoke, rowStatus);
    revoke.addEventListener('click', () =>
      confirmIn(actions, rowStatus, `Revoke the invitation of ${invitation.email}? Its token stops working.`, 'Yes, revoke', invitation.email,
        () => call('DELETE', `/auth/invitations/${encodeURIComponent(invitation.id)}`), idle, `Revoked the invitation of ${invitation.email}.`),
    );
    idle();
    return h('tr', {}, h('td', {}, invitation.email), h('td', {}, invitation.role), h('td', {}, when(invitation.createdAt)), h('td', {}, when(invitation.expiresAt)), actions);
  }

  function inviteForm(): HTMLElement {
    const status = statusArea();
    const email = field({ id: 'invite-email', label: 'E-mail', input: { type: 'email', name: 'invite-email', autocomplete: 'off', required: true } });
    const role = h('select', { id: 'invite-role' }, ...roleOptions(member, 'viewer', true));
    const fields = h('fieldset', {}, h('legend', {}, 'Invite a member'), ...email.nodes, h('label', { for: role.id }, 'Role'), role, h('button', { type: 'submit' }, 'Invite'));
    const form = h('form', { novalidate: true }, fields, status);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const issued = await submit(fields, status, [email], (error) => (codeOf(error) === EMAIL_TAKEN || isBadInput(error) ? email : undefined), () =>
        call<Issued>('POST', '/auth/invitations', { email: email.input.value.trim(), role: role.value }),
      );
      if (issued === undefined) return;
      form.reset();
      const link = h('input', { id: 'invitation-link', type: 'text', readonly: true, class: 'secret', autocomplete: 'off', spellcheck: 'false' });
      link.value = invitationLink(issued.token);
      replaceChildren(secretSlot, secretPanel(issued.token, `Invitation for ${issued.email} (${issued.role})`, () => void load(), {
        label: 'Invitation token',
        name: 'invitation token',
        warning: `It is shown only this once: the gateway keeps only its hash. Send it to ${issued.email} over a channel you trust (your operator's mailer may send it too); it works once, until ${when(issued.expiresAt)}.`,
      }, h('label', { for: link.id }, 'Or send this link, which holds the token: it opens this console to set a password'), link));
      await load();
    });
    return form;
  }

  void load();
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Members'),
    h('p', {}, 'The people of your organization, each with their own sign-in and a role. API keys are the organization’s: a member leaving breaks no integration.'),
    secretSlot,
    manages ? inviteForm() : h('p', { class: 'status notice' }, `Your role (${member?.role ?? ''}) reads the members; only an owner or admin invites, changes or removes one.`),
    manages ? h('table', {}, h('caption', {}, 'Pending invitations, oldest first'), h('thead', {}, h('tr', {}, ...['E-mail', 'Role', 'Invited', 'Expires', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), invitationsBody) : null,
    h('table', {}, h('caption', {}, 'Members, the first member first'), h('thead', {}, h('tr', {}, ...['E-mail', 'Role', 'Joined', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), membersBody),
    listStatus,
    reload,
  );
}
