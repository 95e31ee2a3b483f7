// The invitation page (#invitation=agi_…, issue 50): the invitee sets a password with the token an
// owner or admin sent (POST /auth/invitations/accept) and is signed in. The token comes in the URL's
// fragment, which no browser sends to a server; the shell (app.ts) takes it out of the address bar
// at once, and it is kept in memory only, never shown.
import { acceptInvitation } from './api.js';
import { h } from './dom.js';
import { statusArea } from './feedback.js';
import { codeOf, field, isBadInput, newPasswordField, POLICY_CODES, submit, type Field } from './fields.js';

const INVITATION_INVALID = 1236;
const EMAIL_TAKEN = 1303;

/** `#invitation=agi_…` (or `#invitation` alone: the token is then pasted); undefined for any other fragment. */
export function invitationFromFragment(): string | undefined {
  const fragment = location.hash.replace(/^#/, '');
  if (fragment !== 'invitation' && !fragment.startsWith('invitation=')) return undefined;
  return (new URLSearchParams(fragment).get('invitation') ?? '').trim();
}

export function joinPage(fromLink: string, onJoined: () => void): HTMLElement {
  const status = statusArea();
  const token = field({
    id: 'invitation-token',
    label: 'Invitation token',
    hint: 'The token of your invitation (agi_…), from the person who invited you.',
    input: { type: 'text', name: 'invitation-token', autocomplete: 'off', spellcheck: 'false', required: true },
  });
  token.input.value = fromLink;
  const tokenBox = h('div', { class: 'field-group', hidden: fromLink !== '' }, ...token.nodes);
  const linkNote = h('p', { class: 'muted', hidden: fromLink === '' }, 'Using the invitation from your link.');
  const password = newPasswordField('new-password', 'Your password');
  const fields = h('fieldset', {}, h('legend', {}, 'Join your organization'), linkNote, tokenBox, ...password.nodes, password.toggle, h('button', { type: 'submit' }, 'Join and sign in'));
  const form = h('form', { novalidate: true }, fields, status);
  const place = (error: unknown): Field | undefined => {
    const code = codeOf(error);
    if (code === INVITATION_INVALID || code === EMAIL_TAKEN) {
      tokenBox.hidden = false;
      linkNote.hidden = true;
      return token;
    }
    return POLICY_CODES.has(code ?? 0) || isBadInput(error) ? password : undefined;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    token.clearError();
    if (token.input.value.trim() === '') {
      tokenBox.hidden = false;
      token.showError('Enter the invitation token you were sent.');
      token.input.focus();
      return;
    }
    const joined = await submit(fields, status, [token, password], place, () => acceptInvitation(token.input.value.trim(), password.input.value).then(() => true));
    if (joined !== true) return;
    password.empty();
    token.input.value = '';
    onJoined();
  });
  return h(
    'section',
    { 'aria-labelledby': 'page-title', class: 'sign-in' },
    h('h2', { id: 'page-title', tabindex: -1 }, 'Accept your invitation'),
    h('p', {}, 'Choose the password you will sign in with, with the e-mail you were invited at. The invitation works once.'),
    form,
  );
}
