// Sign-in with the organization's e-mail and password (POST /auth/login), then, for an
// organization with a second factor, its second step (second-step.ts) in the same place.
import { signIn } from './api.js';
import { h, replaceChildren } from './dom.js';
import { run, showNotice, statusArea } from './feedback.js';
import { secondStep } from './second-step.js';

export function signInPage(message: string | undefined, onSignedIn: () => void): HTMLElement {
  const status = statusArea();
  const email = h('input', { id: 'email', type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { id: 'password', type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const fields = h(
    'fieldset',
    {},
    h('legend', {}, 'Sign in to your organization'),
    h('label', { for: email.id }, 'E-mail'),
    email,
    h('label', { for: password.id }, 'Password'),
    password,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  const form = h('form', {}, fields, status);
  const forgot = h('p', {}, 'Forgot the password? Your operator can give you a one-time reset token: ', h('a', { href: 'reset' }, 'set a new password with it'), '.');
  const body = h('div', {}, form, forgot);
  // Back to the password step, the e-mail kept: the second step's mfaToken is spent or abandoned.
  const restart = (notice: string) => {
    replaceChildren(body, form, forgot);
    showNotice(status, notice);
    password.focus();
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const outcome = await run(fields, status, () => signIn(email.value, password.value).then((challenge) => ({ challenge })));
    password.value = '';
    if (outcome === undefined) return password.focus();
    if (outcome.challenge === undefined) return onSignedIn();
    replaceChildren(body, secondStep(outcome.challenge, onSignedIn, restart));
  });
  if (message !== undefined) showNotice(status, message);
  queueMicrotask(() => email.focus());
  return h('section', { 'aria-labelledby': 'page-title', class: 'sign-in' }, h('h2', { id: 'page-title' }, 'Sign in'), body);
}
