// The security page: change the password (POST /auth/password) and the organization's name and
// e-mail (PATCH /auth/organization). Each refusal is shown under the field it is about: the
// password policy's reason under the new password, a wrong current password under that one.
import { call, changePassword } from './api.js';
import { h } from './dom.js';
import { showDone, statusArea } from './feedback.js';
import { codeOf, field, isBadInput, newPasswordField, POLICY_CODES, submit, type Field } from './fields.js';

/** Problem codes the API answers about one field (docs/errors.md). */
const CURRENT_PASSWORD_WRONG = 1217;
const EMAIL_TAKEN = 1303;

type Organization = Readonly<{ id?: string; name?: string; email?: string }>;

export function securityPage(): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'page-title' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Security'),
    passwordForm(),
    profileForm(),
  );
}

function passwordForm(): HTMLElement {
  const status = statusArea();
  const current = field({ id: 'current-password', label: 'Current password', input: { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true } });
  const next = newPasswordField('new-password', 'New password');
  const fields = h('fieldset', {}, h('legend', {}, 'Change the password'), ...current.nodes, ...next.nodes, next.toggle, h('button', { type: 'submit' }, 'Change password'));
  const form = h('form', { novalidate: true }, fields, status);
  // The policy's reasons and any other bad input (a too long value, say) are about the new
  // password; a wrong current password (403, not 401: the session is still good) about that one.
  const place = (error: unknown): Field | undefined =>
    codeOf(error) === CURRENT_PASSWORD_WRONG ? current : POLICY_CODES.has(codeOf(error) ?? 0) || isBadInput(error) ? next : undefined;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const done = await submit(fields, status, [current, next], place, () => changePassword(current.input.value, next.input.value).then(() => true));
    if (done !== true) return;
    form.reset();
    next.input.type = 'password';
    showDone(
      status,
      'Password changed. Every other session of your organization has ended, on every device: they must sign in again with the new password. This console goes on with a new session. API keys are not affected: they keep working.',
    );
  });
  return h('section', { 'aria-labelledby': 'password-title' }, h('h3', { id: 'password-title' }, 'Password'), form);
}

function profileForm(): HTMLElement {
  const status = statusArea();
  const name = field({ id: 'org-name', label: 'New name', hint: 'Leave empty to keep the name.', input: { type: 'text', name: 'organization', autocomplete: 'organization', maxlength: 100 } });
  const email = field({ id: 'org-email', label: 'New e-mail', hint: 'Leave empty to keep the e-mail. It is the one you sign in with.', input: { type: 'email', name: 'email', autocomplete: 'email' } });
  const password = field({ id: 'org-current-password', label: 'Current password (needed to change the e-mail)', input: { type: 'password', name: 'current-password', autocomplete: 'current-password' } });
  const fields = h('fieldset', {}, h('legend', {}, 'Change the name or e-mail'), ...name.nodes, ...email.nodes, ...password.nodes, h('button', { type: 'submit' }, 'Save'));
  const form = h('form', { novalidate: true }, fields, status);
  const place = (error: unknown): Field | undefined => {
    const code = codeOf(error);
    if (code === CURRENT_PASSWORD_WRONG) return password;
    if (code === EMAIL_TAKEN) return email;
    return undefined;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const newName = name.input.value.trim();
    const newEmail = email.input.value.trim();
    const body = {
      ...(newName !== '' && { name: newName }),
      ...(newEmail !== '' && { email: newEmail }),
      ...(newEmail !== '' && { currentPassword: password.input.value }),
    };
    // Said next to the right field before asking; the API checks it all again.
    for (const f of [name, email, password]) f.clearError();
    if (newName === '' && newEmail === '') return name.showError('Enter a new name, a new e-mail, or both.');
    if (newEmail !== '' && password.input.value === '') return password.showError('Changing the e-mail needs the current password.');
    const changed = await submit(fields, status, [name, email, password], place, () => call<Organization>('PATCH', '/auth/organization', body));
    if (changed === undefined) return;
    form.reset();
    const now = [typeof changed.name === 'string' && `name: ${changed.name}`, typeof changed.email === 'string' && `e-mail: ${changed.email}`].filter((part): part is string => part !== false);
    showDone(
      status,
      `Saved${now.length > 0 ? ` (${now.join(', ')})` : ''}.${newEmail !== '' ? ' Sign in with the new e-mail from now on; every other session of your organization has ended.' : ''}`,
    );
  });
  return h('section', { 'aria-labelledby': 'profile-title' }, h('h3', { id: 'profile-title' }, 'Name and e-mail'), form);
}
