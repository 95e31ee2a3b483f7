// The security page: change the password (POST /auth/password) and the organization's name and
// e-mail (GET and PATCH /auth/organization); the second factor (second-factor.ts). Each refusal is shown under the field it is about: the
// password policy's reason under the new password, a wrong current password under that one.
import { call, changePassword } from './api.js';
import { h, replaceChildren } from './dom.js';
import { clear, showDone, showError, statusArea } from './feedback.js';
import { codeOf, field, isBadInput, newPasswordField, POLICY_CODES, submit, type Field } from './fields.js';
import { may, signedInMember } from './member.js';
import { secondFactorSection } from './second-factor.js';

/** Problem codes the API answers about one field (docs/errors.md). */
const CURRENT_PASSWORD_WRONG = 1217;
const NOTHING_TO_CHANGE = 1222;
const CURRENT_PASSWORD_REQUIRED = 1223;
const EMAIL_CHANGED_MEANWHILE = 1224;
const EMAIL_TAKEN = 1303;

/** As GET and PATCH /auth/organization answer. */
type Organization = Readonly<{ id: string; name: string; email: string; createdAt: string }>;

export function securityPage(): HTMLElement {
  // The account a password manager should save the new password under: a hidden username field
  // in the password form (what browsers look for), filled once the e-mail is known.
  const username = h('input', { type: 'email', name: 'username', autocomplete: 'username', hidden: true, readonly: true, tabindex: -1 });
  const profile = profileForm((org) => {
    if (username.value === '') username.value = org.email;
  });
  // Each member's password and second factor are its own (issue 50): saved under its own e-mail.
  // The organization's name and e-mail are an owner's to change: others see them, with no form.
  void signedInMember().then((member) => {
    if (member === undefined) return;
    username.value = member.email;
    if (may.changeOrganization(member)) return;
    profile.querySelector('form')?.replaceWith(h('p', {}, `Only an owner changes the organization's name and e-mail; you are a${member.role === 'admin' ? 'n' : ''} ${member.role}.`));
  });
  return h('section', { 'aria-labelledby': 'page-title' }, h('h2', { id: 'page-title', tabindex: -1 }, 'Security'), passwordForm(username), profile, secondFactorSection());
}

function passwordForm(username: HTMLInputElement): HTMLElement {
  const status = statusArea();
  const current = field({ id: 'current-password', label: 'Current password', input: { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true } });
  const next = newPasswordField('new-password', 'New password');
  const fields = h('fieldset', {}, h('legend', {}, 'Change the password'), username, ...current.nodes, ...next.nodes, next.toggle, h('button', { type: 'submit' }, 'Change password'));
  const form = h('form', { novalidate: true }, fields, status);
  // The policy's reasons and any other bad input (a too long value, say) are about the new
  // password; a wrong current password (403, not 401: the session is still good) about that one.
  const place = (error: unknown): Field | undefined =>
    codeOf(error) === CURRENT_PASSWORD_WRONG ? current : POLICY_CODES.has(codeOf(error) ?? 0) || isBadInput(error) ? next : undefined;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const done = await submit(fields, status, [current, next], place, () => changePassword(current.input.value, next.input.value).then(() => true));
    if (done !== true) return;
    // Not form.reset(): that would also empty the hidden username.
    current.input.value = '';
    next.empty();
    showDone(
      status,
      'Password changed. Every other session of your organization has ended, on every device: they must sign in again with the new password. This console goes on with a new session. API keys are not affected: they keep working.',
    );
  });
  return h('section', { 'aria-labelledby': 'password-title' }, h('h3', { id: 'password-title' }, 'Password'), form);
}

function profileForm(onLoaded: (org: Organization) => void): HTMLElement {
  const status = statusArea();
  const shown = h('dl');
  const name = field({ id: 'org-name', label: 'Name', input: { type: 'text', name: 'organization', autocomplete: 'organization', maxlength: 100, required: true } });
  const email = field({ id: 'org-email', label: 'E-mail', hint: 'The one you sign in with. Changing it ends every other session.', input: { type: 'email', name: 'email', autocomplete: 'email', required: true } });
  const password = field({ id: 'org-current-password', label: 'Current password (needed to change the e-mail)', input: { type: 'password', name: 'current-password', autocomplete: 'current-password' } });
  const fields = h('fieldset', { disabled: true }, h('legend', {}, 'Change the name or e-mail'), ...name.nodes, ...email.nodes, ...password.nodes, h('button', { type: 'submit' }, 'Save'));
  const form = h('form', { novalidate: true }, fields, status);
  // What the gateway holds now (GET /auth/organization): shown, and the fields start from it, so
  // only what was edited is sent.
  let current: Organization | undefined;
  const showCurrent = (org: Organization) => {
    current = org;
    replaceChildren(shown, h('dt', {}, 'Name'), h('dd', {}, org.name), h('dt', {}, 'E-mail'), h('dd', {}, org.email));
    name.input.value = org.name;
    email.input.value = org.email;
    password.input.value = '';
    onLoaded(org);
  };
  // The form stays disabled until the current values are in (a 503: the Retry button loads again).
  async function load(): Promise<void> {
    clear(status);
    try {
      showCurrent(await call<Organization>('GET', '/auth/organization'));
      fields.disabled = false;
    } catch (error) {
      showError(status, error, () => void load());
    }
  }
  const place = (error: unknown): Field | undefined => {
    const code = codeOf(error);
    if (code === CURRENT_PASSWORD_WRONG || code === CURRENT_PASSWORD_REQUIRED) return password;
    if (code === EMAIL_TAKEN || code === EMAIL_CHANGED_MEANWHILE) return email;
    if (code === NOTHING_TO_CHANGE) return name;
    return undefined;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (current === undefined) return;
    const newName = name.input.value.trim();
    const newEmail = email.input.value.trim();
    const nameChanged = newName !== current.name;
    const emailChanged = newEmail.toLowerCase() !== current.email.toLowerCase();
    // Said next to the right field before asking; the API checks it all again.
    for (const f of [name, email, password]) f.clearError();
    if (newName === '') return name.showError('The name cannot be empty.');
    if (newEmail === '') return email.showError('The e-mail cannot be empty.');
    if (!nameChanged && !emailChanged) return name.showError('Nothing to change: edit the name, the e-mail, or both.');
    if (emailChanged && password.input.value === '') return password.showError('Changing the e-mail needs the current password.');
    const body = {
      ...(nameChanged && { name: newName }),
      ...(emailChanged && { email: newEmail, currentPassword: password.input.value }),
    };
    const changed = await submit(fields, status, [name, email, password], place, () => call<Organization>('PATCH', '/auth/organization', body));
    if (changed === undefined) return;
    showCurrent(changed);
    showDone(
      status,
      `Saved.${emailChanged ? ' Sign in with the new e-mail from now on; every other session of your organization has ended.' : ''}`,
    );
  });
  void load();
  return h('section', { 'aria-labelledby': 'profile-title' }, h('h3', { id: 'profile-title' }, 'Name and e-mail'), shown, form);
}
