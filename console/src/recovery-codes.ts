// Recovery codes: shown once in a panel when the first factor is turned on or when new ones are
// made (POST /auth/mfa/recovery-codes, with the current password), then gone from the page.
import { call } from './api.js';
import { h } from './dom.js';
import { showNotice, statusArea } from './feedback.js';
import { codeOf, field, submit } from './fields.js';
import { proofField, withProof, withProofField, type Factors } from './step-up.js';

const CURRENT_PASSWORD_WRONG = 1217;

/** The codes, once, with a copy button; `onDone` when their owner says they are saved. */
export function recoveryCodesPanel(codes: readonly string[], title: string, onDone: () => void): HTMLElement {
  const list = h('ol', { id: 'recovery-codes', class: 'codes', 'aria-describedby': 'recovery-warning' }, ...codes.map((code) => h('li', {}, h('code', {}, code))));
  const copied = h('span', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const copy = h('button', {
    type: 'button',
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(codes.join('\n'));
        copied.textContent = 'Copied.';
      } catch {
        copied.textContent = 'Select the codes and copy them (Ctrl+C).';
      }
    },
  }, 'Copy the codes');
  const panel = h(
    'section',
    { class: 'secret-panel', 'aria-labelledby': 'recovery-title', tabindex: -1 },
    h('h4', { id: 'recovery-title' }, title),
    h(
      'p',
      { id: 'recovery-warning', class: 'warning' },
      h('strong', {}, 'Save these recovery codes now, somewhere other than this device. '),
      'Each one finishes a sign-in once in place of the second factor, if you lose it. They are shown only this once: the gateway keeps only their hashes.',
    ),
    list,
    h('div', { class: 'row' }, copy, copied),
    h('button', {
      type: 'button',
      onclick: () => {
        list.replaceChildren();
        panel.remove();
        onDone();
      },
    }, 'I have stored them'),
  );
  queueMicrotask(() => panel.focus());
  return panel;
}

/** New codes for old (the old ones die), with the current password and a proof of the second factor. */
export function recoveryCodesForm(left: number, factors: Factors, onCodes: (codes: string[]) => void): HTMLElement {
  const status = statusArea();
  const password = field({ id: 'recovery-password', label: 'Current password (for new recovery codes)', input: { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true } });
  const proof = proofField('recovery-proof', factors, 'for new recovery codes');
  const fields = h('fieldset', {}, h('legend', {}, 'New recovery codes'), h('p', {}, 'Ten new codes replace the old ones, which stop working at once.'), ...password.nodes, ...(proof?.field.nodes ?? []), h('button', { type: 'submit' }, 'Make new recovery codes'));
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    proof?.field.clearError();
    if (password.input.value === '') return password.showError('Enter your current password.');
    const missing = proof?.missing();
    if (missing !== undefined) return proof?.field.showError(missing);
    const currentPassword = password.input.value;
    const place = (error: unknown) => (proof?.owns(error) === true ? proof.field : codeOf(error) === CURRENT_PASSWORD_WRONG ? password : undefined);
    const answer = await submit(fields, status, withProofField([password], proof), place, () =>
      withProof(proof, (proven) => call<{ recoveryCodes: string[] }>('POST', '/auth/mfa/recovery-codes', { currentPassword, ...proven })),
    );
    password.input.value = '';
    if (answer === undefined) return;
    if ('ceremony' in answer) return showNotice(status, answer.ceremony);
    onCodes(answer.recoveryCodes);
  });
  return h(
    'section',
    { 'aria-labelledby': 'recovery-codes-title' },
    h('h4', { id: 'recovery-codes-title' }, 'Recovery codes'),
    h('p', { id: 'recovery-left' }, `${left} unused recovery code${left === 1 ? '' : 's'} left.`, left <= 3 ? ' Make new ones before they run out.' : ''),
    form,
  );
}
