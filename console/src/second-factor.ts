// The security page's second factor (GET /auth/mfa): an authenticator app (TOTP) set up with a QR
// code and confirmed with a first code, or removed with the password and a code; the recovery
// codes (recovery-codes.ts); passkeys (passkeys.ts). What the gateway answers decides what shows.
import { call } from './api.js';
import { h, replaceChildren } from './dom.js';
import { notOffered, showDone, showError, showNotice, statusArea } from './feedback.js';
import { codeOf, field, submit, type Field } from './fields.js';
import { passkeysSection, type Passkey } from './passkeys.js';
import { qrCode } from './qr.js';
import { recoveryCodesForm, recoveryCodesPanel } from './recovery-codes.js';
import { factorsOf, proofField, withProof, withProofField, type Factors } from './step-up.js';

/** Problem codes the API answers about one field (docs/errors.md). */
const CURRENT_PASSWORD_WRONG = 1217;
const MFA_CODE_REJECTED = 1119;

/** As GET /auth/mfa answers; `passkeys` once the gateway has them. */
export type MfaStatus = Readonly<{
  methods: readonly string[];
  totp: Readonly<{ enabled: boolean; pending: boolean }>;
  recoveryCodesLeft: number;
  passkeys?: readonly Passkey[];
  /** What this gateway lets the organization add (its operator's settings); absent from a gateway before it. */
  offered?: Readonly<{ totp: boolean; passkey: boolean }>;
}>;

/** What a part of the section can ask for: reload the status, or show new recovery codes first. */
export type Refresh = Readonly<{ reload(done?: string): Promise<void>; showCodes(codes: readonly string[], title: string): void }>;

export function secondFactorSection(): HTMLElement {
  const status = statusArea();
  const body = h('div');
  async function load(done?: string): Promise<void> {
    try {
      render(await call<MfaStatus>('GET', '/auth/mfa'));
      if (done !== undefined) showDone(status, done);
      else replaceChildren(status);
    } catch (error) {
      showError(status, error, () => void load());
    }
  }
  const refresh: Refresh = {
    reload: load,
    // The codes take the section's place until their owner says they are stored.
    showCodes: (codes, title) => replaceChildren(body, recoveryCodesPanel(codes, title, () => void load())),
  };
  function render(mfa: MfaStatus): void {
    const anyFactor = mfa.totp.enabled || (mfa.passkeys?.length ?? 0) > 0;
    // With a factor enrolled, each change to the authenticators asks for a proof of it (issue 45).
    const factors = factorsOf(mfa);
    replaceChildren(
      body,
      h('p', { id: 'mfa-summary' }, anyFactor ? `Sign-in asks for a second factor: ${describeMethods(mfa)}.` : mfa.offered?.totp === false && mfa.offered.passkey === false ? 'Sign-in asks for the password only; this gateway offers no second factor.' : 'Sign-in asks for the password only. Add a second factor so that a stolen password is not enough.'),
      totpSection(mfa, factors, refresh),
      mfa.passkeys === undefined ? null : passkeysSection(mfa.passkeys, refresh, mfa.offered?.passkey ?? true, factors),
      anyFactor ? recoveryCodesForm(mfa.recoveryCodesLeft, factors, (codes) => refresh.showCodes(codes, 'Your new recovery codes')) : null,
    );
  }
  void load();
  return h('section', { 'aria-labelledby': 'mfa-title' }, h('h3', { id: 'mfa-title' }, 'Second factor'), status, body);
}

function describeMethods(mfa: MfaStatus): string {
  const names = [mfa.totp.enabled ? 'an authenticator app' : '', (mfa.passkeys?.length ?? 0) > 0 ? 'a passkey' : '', mfa.recoveryCodesLeft > 0 ? 'a recovery code' : ''];
  return names.filter((name) => name !== '').join(', or ');
}

const passwordField = (id: string, label: string): Field =>
  field({ id, label, input: { type: 'password', name: 'current-password', autocomplete: 'current-password', required: true } });
const codeField = (id: string, label: string): Field =>
  field({ id, label, hint: 'The 6 digits the app shows now.', input: { type: 'text', name: 'code', autocomplete: 'one-time-code', inputmode: 'numeric', maxlength: 16, spellcheck: 'false', required: true } });

function totpSection(mfa: MfaStatus, factors: Factors, refresh: Refresh): HTMLElement {
  const slot = h('div');
  // Not offered: the setup form would only end in the gateway's 409; an app already set up can still be removed.
  const offered = mfa.offered?.totp ?? true;
  replaceChildren(slot, mfa.totp.enabled ? removeForm(refresh) : offered ? beginForm(mfa.totp.pending, factors, slot, refresh) : notOffered('totp-not-offered', 'authenticator apps'));
  return h(
    'section',
    { 'aria-labelledby': 'totp-title' },
    h('h4', { id: 'totp-title' }, 'Authenticator app (TOTP)'),
    h('p', { id: 'totp-state' }, mfa.totp.enabled ? 'On: sign-in asks for the 6-digit code the app shows.' : 'Off.'),
    slot,
  );
}

/** Step 1: the current password (and beside a passkey, a proof) gets a new secret (POST /auth/mfa/totp), pending until confirmed. */
function beginForm(pending: boolean, factors: Factors, slot: HTMLElement, refresh: Refresh): HTMLElement {
  const status = statusArea();
  const password = passwordField('totp-password', 'Current password (to set up the app)');
  const proof = proofField('totp-proof', factors, 'to set up the app');
  const fields = h(
    'fieldset',
    {},
    h('legend', {}, 'Set up an authenticator app'),
    pending ? h('p', {}, 'A setup was started and not finished; its secret cannot be shown again. Start again for a new one.') : null,
    ...password.nodes,
    ...(proof?.field.nodes ?? []),
    h('button', { type: 'submit' }, 'Set up an authenticator app'),
  );
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    proof?.field.clearError();
    if (password.input.value === '') return password.showError('Enter your current password.');
    const missing = proof?.missing();
    if (missing !== undefined) return proof?.field.showError(missing);
    const currentPassword = password.input.value;
    const place = (error: unknown) => (proof?.owns(error) === true ? proof.field : codeOf(error) === CURRENT_PASSWORD_WRONG ? password : undefined);
    const enrolment = await submit(fields, status, withProofField([password], proof), place, () =>
      withProof(proof, (proven) => call<{ secret: string; otpauthUri: string }>('POST', '/auth/mfa/totp', { currentPassword, ...proven })),
    );
    password.input.value = '';
    if (enrolment === undefined) return;
    if ('ceremony' in enrolment) return showNotice(status, enrolment.ceremony);
    replaceChildren(slot, confirmForm(enrolment, refresh));
  });
  return form;
}

/** Step 2: the QR code and the secret as text, then the app's first code turns it on. */
function confirmForm(enrolment: Readonly<{ secret: string; otpauthUri: string }>, refresh: Refresh): HTMLElement {
  const status = statusArea();
  const code = codeField('totp-code', 'Code from the app');
  const fields = h('fieldset', {}, h('legend', {}, 'Turn it on with a first code'), ...code.nodes, h('button', { type: 'submit' }, 'Turn on'), h('button', { type: 'button', class: 'link', onclick: () => void refresh.reload() }, 'Cancel'));
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = code.input.value.replace(/\s/g, '');
    if (value === '') return code.showError('Enter the code the app shows.');
    const answer = await submit(fields, status, [code], (error) => (codeOf(error) === MFA_CODE_REJECTED ? code : undefined), () =>
      call<{ recoveryCodes?: string[] }>('POST', '/auth/mfa/totp/confirm', { code: value }),
    );
    code.input.value = '';
    if (answer === undefined) return;
    // Recovery codes come with the organization's first factor only; with a passkey already on, the ones it has stay.
    if (answer.recoveryCodes !== undefined) refresh.showCodes(answer.recoveryCodes, 'The authenticator app is on. Your recovery codes');
    else await refresh.reload('The authenticator app is on: sign-in asks for its code (or a passkey). Your recovery codes stay as they are.');
  });
  // The secret in groups of four, as apps show it for typing; copying keeps the spaces out.
  const secret = h('code', { id: 'totp-secret', class: 'secret-text' }, enrolment.secret.replace(/(.{4})(?=.)/g, '$1 '));
  secret.addEventListener('copy', (event) => {
    event.clipboardData?.setData('text/plain', enrolment.secret);
    event.preventDefault();
  });
  queueMicrotask(() => code.input.focus());
  return h(
    'div',
    { class: 'enrolment' },
    h('p', {}, h('strong', {}, 'Scan this QR code with your authenticator app'), ' (any TOTP app: 6 digits, 30 seconds).'),
    qrCode(enrolment.otpauthUri, 'QR code of the authenticator app’s secret'),
    h('p', {}, 'Or enter this secret in the app by hand: ', secret),
    h('p', { class: 'hint' }, 'Shown only now: the gateway keeps it encrypted and never shows it again.'),
    form,
  );
}

/** Removal: the current password and a code (DELETE /auth/mfa/totp). */
function removeForm(refresh: Refresh): HTMLElement {
  const status = statusArea();
  const password = passwordField('totp-remove-password', 'Current password (to remove the app)');
  const code = codeField('totp-remove-code', 'Code from the app (to remove it)');
  const fields = h('fieldset', {}, h('legend', {}, 'Remove the authenticator app'), ...password.nodes, ...code.nodes, h('button', { type: 'submit', class: 'danger' }, 'Remove the authenticator app'));
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    for (const f of [password, code]) f.clearError();
    if (password.input.value === '') return password.showError('Enter your current password.');
    const value = code.input.value.replace(/\s/g, '');
    if (value === '') return code.showError('Enter the code the app shows.');
    const place = (error: unknown) => (codeOf(error) === CURRENT_PASSWORD_WRONG ? password : codeOf(error) === MFA_CODE_REJECTED ? code : undefined);
    const done = await submit(fields, status, [password, code], place, () => call('DELETE', '/auth/mfa/totp', { currentPassword: password.input.value, code: value }).then(() => true));
    password.input.value = '';
    code.input.value = '';
    if (done === true) await refresh.reload('The authenticator app is removed: sign-in no longer asks for its code.');
  });
  return form;
}
