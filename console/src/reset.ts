// The reset page (/console/reset#agr_…): sets a new password with the one-time reset token an
// operator handed out (POST /auth/password/reset). The token comes in the URL's fragment, never
// its query: a fragment is not sent to any server, so it reaches no access log, proxy or Referer.
// It is taken out of the address bar (and the history entry) at once, and kept in memory only.
import { call } from './api.js';
import { h, replaceChildren } from './dom.js';
import { showDone, statusArea } from './feedback.js';
import { codeOf, field, isBadInput, newPasswordField, POLICY_CODES, submit, type Field } from './fields.js';

const RESET_TOKEN_INVALID = 1218;

/** `#agr_…`, or `#token=agr_…` / `#resetToken=agr_…` as a link builder may write it. */
function tokenFromFragment(): string {
  const fragment = location.hash.replace(/^#/, '');
  if (fragment === '') return '';
  const params = new URLSearchParams(fragment);
  const named = params.get('token') ?? params.get('resetToken');
  if (named !== null) return named.trim();
  try {
    return decodeURIComponent(fragment).trim();
  } catch {
    return fragment.trim();
  }
}

function resetPage(fromLink: string): HTMLElement {
  const status = statusArea();
  const token = field({
    id: 'reset-token',
    label: 'Reset token',
    hint: 'The one-time token your operator gave you (agr_…).',
    input: { type: 'text', name: 'reset-token', autocomplete: 'off', spellcheck: 'false', required: true },
  });
  token.input.value = fromLink;
  // From a link the token is not shown (it is a credential until used); asked for otherwise, and
  // again when the one from the link was refused.
  const tokenBox = h('div', { class: 'field-group', hidden: fromLink !== '' }, ...token.nodes);
  const linkNote = h('p', { class: 'muted', hidden: fromLink === '' }, 'Using the reset token from your link.');
  const next = newPasswordField('new-password', 'New password');
  const fields = h('fieldset', {}, h('legend', {}, 'Set a new password'), linkNote, tokenBox, ...next.nodes, next.toggle, h('button', { type: 'submit' }, 'Set new password'));
  const form = h('form', { novalidate: true }, fields, status);
  const place = (error: unknown): Field | undefined => {
    if (codeOf(error) === RESET_TOKEN_INVALID) {
      tokenBox.hidden = false;
      linkNote.hidden = true;
      return token;
    }
    return POLICY_CODES.has(codeOf(error) ?? 0) || isBadInput(error) ? next : undefined;
  };
  const section = h('section', { 'aria-labelledby': 'page-title' }, h('h2', { id: 'page-title', tabindex: -1 }, 'Set a new password'), form);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    token.clearError();
    if (token.input.value.trim() === '') {
      tokenBox.hidden = false;
      token.showError('Enter the reset token your operator gave you.');
      token.input.focus();
      return;
    }
    const done = await submit(fields, status, [token, next], place, () =>
      call('POST', '/auth/password/reset', { resetToken: token.input.value.trim(), newPassword: next.input.value }, false).then(() => true),
    );
    if (done !== true) return;
    // The token is spent: out of the page, with the password.
    next.empty();
    token.input.value = '';
    const message = statusArea();
    showDone(message, 'Your password is set. Every session of your organization has ended; sign in with the new password. API keys are not affected.');
    replaceChildren(section, h('h2', { id: 'page-title', tabindex: -1 }, 'Password set'), message, h('p', {}, h('a', { href: './' }, 'Sign in to the console')));
    (section.querySelector('h2') as HTMLElement).focus();
  });
  return section;
}

function show(): void {
  const fromLink = tokenFromFragment();
  // Out of the address bar and this history entry: a shoulder, a screenshot or Back must not show it.
  if (location.hash !== '') history.replaceState(null, '', location.pathname + location.search);
  replaceChildren(document.getElementById('main')!, resetPage(fromLink));
  queueMicrotask(() => (document.getElementById(fromLink === '' ? 'reset-token' : 'new-password') as HTMLInputElement | null)?.focus());
}

// A link opened in a tab already on this page changes only the fragment: no reload, so read it again.
window.addEventListener('hashchange', () => {
  if (location.hash !== '') show();
});
show();
