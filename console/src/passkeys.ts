// Passkeys as the second factor: the organization's list (from GET /auth/mfa), add one (the
// current password gets registration options, the browser's WebAuthn ceremony makes the
// credential, POST /auth/mfa/passkeys keeps it), rename one, remove one with the current password.
import { call } from './api.js';
import { h, when } from './dom.js';
import { notOffered, showNotice, statusArea } from './feedback.js';
import { codeOf, field, isBadInput, submit, type Field } from './fields.js';
import type { Refresh } from './second-factor.js';
import { describeCeremonyError, register, webAuthnAvailable } from './webauthn.js';
import { proofField, withProof, withProofField, type Factors, type Proof } from './step-up.js';

const CURRENT_PASSWORD_WRONG = 1217;

export type Passkey = Readonly<{ id: string; name: string; createdAt: string; lastUsedAt: string | null }>;

/** `offered`: the gateway registers passkeys (GET /auth/mfa's offered.passkey); the kept ones are listed either way. */
export function passkeysSection(passkeys: readonly Passkey[], refresh: Refresh, offered: boolean, factors: Factors): HTMLElement {
  const rows = passkeys.map((passkey, i) => row(passkey, i, refresh, factors));
  return h(
    'section',
    { 'aria-labelledby': 'passkeys-title' },
    h('h4', { id: 'passkeys-title' }, 'Passkeys'),
    h('p', {}, 'A passkey on this device, your phone or a security key confirms a sign-in after the password, with your fingerprint, face or PIN.'),
    passkeys.length === 0
      ? h('p', { id: 'passkeys-none' }, 'No passkey yet.')
      : h('table', { id: 'passkeys' }, h('caption', {}, 'Your organization’s passkeys'), h('thead', {}, h('tr', {}, ...['Name', 'Added', 'Last used', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))), h('tbody', {}, ...rows)),
    !offered ? notOffered('passkeys-not-offered', 'passkeys') : webAuthnAvailable() ? addForm(passkeys.length, factors, refresh) : h('p', { class: 'status notice' }, 'This browser cannot make passkeys (no WebAuthn).'),
  );
}

function addForm(count: number, factors: Factors, refresh: Refresh): HTMLElement {
  const status = statusArea();
  const password = field({ id: 'passkey-password', label: 'Current password (to add a passkey)', input: { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true } });
  const proof = proofField('passkey-proof', factors, 'to add a passkey');
  const name = field({ id: 'passkey-name', label: 'Passkey name (optional)', hint: `Up to 64 characters; “Passkey ${count + 1}” if left empty.`, input: { type: 'text', name: 'passkey-name', maxlength: 64, autocomplete: 'off' } });
  const fields = h('fieldset', {}, h('legend', {}, 'Add a passkey'), ...password.nodes, ...(proof?.field.nodes ?? []), ...name.nodes, h('button', { type: 'submit' }, 'Add a passkey'));
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    proof?.field.clearError();
    if (password.input.value === '') return password.showError('Enter your current password.');
    const missing = proof?.missing();
    if (missing !== undefined) return proof?.field.showError(missing);
    const currentPassword = password.input.value;
    password.input.value = '';
    const chosen = name.input.value.trim();
    // A refused registration (challenge, origin, user verification) is about the ceremony, not a field.
    const place = (error: unknown): Field | undefined => (proof?.owns(error) === true ? proof.field : codeOf(error) === CURRENT_PASSWORD_WRONG ? password : undefined);
    const added = await submit(fields, status, withProofField([password, name], proof), place, async () => {
      const begun = await withProof(proof, (proven) => call<{ options: unknown }>('POST', '/auth/mfa/passkeys/registration', { currentPassword, ...proven }));
      if ('ceremony' in begun) return begun;
      const { options } = begun;
      let response: unknown;
      try {
        response = await register(options);
      } catch (error) {
        return { ceremony: describeCeremonyError(error) };
      }
      return call<{ passkey: Passkey; recoveryCodes?: string[] }>('POST', '/auth/mfa/passkeys', { response, ...(chosen !== '' && { name: chosen }) });
    });
    if (added === undefined) return;
    if ('ceremony' in added) return showNotice(status, added.ceremony);
    if (added.recoveryCodes !== undefined) refresh.showCodes(added.recoveryCodes, `Passkey “${added.passkey.name}” added: your second factor is on. Your recovery codes`);
    else await refresh.reload(`Passkey “${added.passkey.name}” added.`);
  });
  return form;
}

function row(passkey: Passkey, index: number, refresh: Refresh, factors: Factors): HTMLTableRowElement {
  const status = statusArea();
  const actions = h('td', { class: 'actions' });
  const buttons = h(
    'div',
    {},
    h('button', { type: 'button', 'aria-label': `Rename ${passkey.name}`, onclick: () => show(renameForm(passkey, index, refresh, cancel)) }, 'Rename'),
    h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${passkey.name}`, onclick: () => show(removeForm(passkey, index, proofField(`passkey-remove-proof-${index}`, factors, `to remove ${passkey.name}`), refresh, cancel)) }, 'Remove'),
  );
  const show = (form: HTMLElement) => {
    actions.replaceChildren(form, status);
    form.querySelector('input')?.focus();
  };
  function cancel(): void {
    actions.replaceChildren(buttons, status);
  }
  cancel();
  return h('tr', {}, h('td', {}, passkey.name), h('td', {}, when(passkey.createdAt)), h('td', {}, passkey.lastUsedAt === null ? 'Never' : when(passkey.lastUsedAt)), actions);
}

function renameForm(passkey: Passkey, index: number, refresh: Refresh, cancel: () => void): HTMLElement {
  const status = statusArea();
  const name = field({ id: `passkey-rename-${index}`, label: `New name for ${passkey.name}`, input: { type: 'text', maxlength: 64, autocomplete: 'off', required: true } });
  name.input.value = passkey.name;
  const fields = h('fieldset', {}, ...name.nodes, h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Rename'), h('button', { type: 'button', class: 'link', onclick: cancel }, 'Cancel')));
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = name.input.value.trim();
    if (value === '') return name.showError('The name cannot be empty.');
    const renamed = await submit(fields, status, [name], (error) => (isBadInput(error) ? name : undefined), () => call<Passkey>('PATCH', `/auth/mfa/passkeys/${encodeURIComponent(passkey.id)}`, { name: value }));
    if (renamed !== undefined) await refresh.reload(`Renamed to “${renamed.name}”.`);
  });
  return form;
}

function removeForm(passkey: Passkey, index: number, proof: Proof | undefined, refresh: Refresh, cancel: () => void): HTMLElement {
  const status = statusArea();
  const password = field({ id: `passkey-remove-${index}`, label: `Current password (to remove ${passkey.name})`, input: { type: 'password', autocomplete: 'current-password', required: true } });
  const fields = h('fieldset', {}, ...password.nodes, ...(proof?.field.nodes ?? []), h('div', { class: 'row' }, h('button', { type: 'submit', class: 'danger' }, 'Remove passkey'), h('button', { type: 'button', class: 'link', onclick: cancel }, 'Cancel')));
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    proof?.field.clearError();
    if (password.input.value === '') return password.showError('Enter your current password.');
    const missing = proof?.missing();
    if (missing !== undefined) return proof?.field.showError(missing);
    const currentPassword = password.input.value;
    const place = (error: unknown) => (proof?.owns(error) === true ? proof.field : codeOf(error) === CURRENT_PASSWORD_WRONG ? password : undefined);
    const done = await submit(fields, status, withProofField([password], proof), place, () =>
      withProof(proof, (proven) => call('DELETE', `/auth/mfa/passkeys/${encodeURIComponent(passkey.id)}`, { currentPassword, ...proven }).then(() => ({ removed: true }))),
    );
    password.input.value = '';
    if (done === undefined) return;
    if ('ceremony' in done) return showNotice(status, done.ceremony);
    await refresh.reload(`Passkey “${passkey.name}” removed.`);
  });
  return form;
}
