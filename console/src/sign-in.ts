// Sign-in with the organization's e-mail and password (POST /auth/login).
import { signIn } from './api.js';
import { h } from './dom.js';
import { run, showNotice, statusArea } from './feedback.js';

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
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const done = await run(fields, status, () => signIn(email.value, password.value).then(() => true));
    password.value = '';
    if (done === true) onSignedIn();
    else password.focus();
  });
  if (message !== undefined) showNotice(status, message);
  queueMicrotask(() => email.focus());
  return h(
    'section',
    { 'aria-labelledby': 'page-title', class: 'sign-in' },
    h('h2', { id: 'page-title' }, 'Sign in'),
    form,
    h('p', {}, 'Forgot the password? Your operator can give you a one-time reset token: ', h('a', { href: 'reset' }, 'set a new password with it'), '.'),
  );
}
