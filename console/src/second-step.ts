// The sign-in's second step, for an organization with a second factor: POST /auth/login answered
// 403 (1116) with an mfaToken and the methods that finish it; this form sends one of them to POST
// /auth/login/mfa (a code from the authenticator app, a recovery code, or a passkey). Until then
// the console holds no token at all.
import { ApiError, finishSignIn, type MfaChallenge, type SecondFactor } from './api.js';
import { h } from './dom.js';
import { clear, showError, showNotice, statusArea } from './feedback.js';
import { codeOf, field, submit } from './fields.js';
import { authenticate, describeCeremonyError, webAuthnAvailable } from './webauthn.js';

const MFA_CODE_WRONG = 1117;
const MFA_TOKEN_INVALID = 1118;

/**
 * `onRestart` goes back to the password step with a message: the mfaToken is single use and lives
 * a few minutes, and five wrong codes spend it (1118), so then only a new sign-in helps.
 */
export function secondStep(challenge: MfaChallenge, onSignedIn: () => void, onRestart: (message: string) => void): HTMLElement {
  const status = statusArea();
  const hasTotp = challenge.methods.includes('totp');
  const hasRecovery = challenge.methods.includes('recovery_code');
  const hasPasskey = challenge.methods.includes('passkey') && challenge.passkeyOptions !== undefined;

  const code = field({
    id: 'mfa-code',
    label: 'Code from your authenticator app',
    hint: 'The 6 digits the app shows now.',
    input: { type: 'text', name: 'code', autocomplete: 'one-time-code', inputmode: 'numeric', maxlength: 16, spellcheck: 'false', required: true },
  });
  const recovery = field({
    id: 'recovery-code',
    label: 'Recovery code',
    hint: 'One of the codes you saved when you turned the second factor on; each works once.',
    input: { type: 'text', name: 'recovery-code', autocomplete: 'off', maxlength: 64, spellcheck: 'false', required: true },
  });
  // One of the two text fields at a time: the app's code first when there is an app.
  let useRecovery = !hasTotp;
  const codeBox = h('div', { class: 'field-group' }, ...code.nodes);
  const recoveryBox = h('div', { class: 'field-group' }, ...recovery.nodes);
  const switcher = h('button', { type: 'button', class: 'link' });
  const showMode = () => {
    codeBox.hidden = useRecovery;
    recoveryBox.hidden = !useRecovery;
    code.input.required = !useRecovery;
    recovery.input.required = useRecovery;
    switcher.textContent = useRecovery ? 'Use the authenticator app instead' : 'Use a recovery code instead';
    switcher.hidden = !(hasTotp && hasRecovery);
  };
  switcher.addEventListener('click', () => {
    useRecovery = !useRecovery;
    showMode();
    (useRecovery ? recovery : code).input.focus();
  });
  showMode();

  const spent = (error: unknown) => {
    if (codeOf(error) !== MFA_TOKEN_INVALID) return false;
    onRestart('The second step took too long or had too many wrong codes. Sign in again.');
    return true;
  };

  const fields = h(
    'fieldset',
    {},
    h('legend', {}, hasPasskey ? 'Or with a code' : 'Second step'),
    hasTotp || hasRecovery ? codeBox : null,
    hasRecovery ? recoveryBox : null,
    hasTotp || hasRecovery ? h('button', { type: 'submit' }, 'Verify') : null,
    switcher,
  );
  const form = h('form', { novalidate: true }, fields, status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const target = useRecovery ? recovery : code;
    const value = target.input.value.trim();
    target.clearError();
    if (value === '') return target.showError(useRecovery ? 'Enter a recovery code.' : 'Enter the code the app shows.');
    const proof: SecondFactor = useRecovery ? { recoveryCode: value } : { code: value.replace(/\s/g, '') };
    let failure: unknown;
    const done = await submit(fields, status, [code, recovery], (error) => {
      failure = error;
      return codeOf(error) === MFA_CODE_WRONG ? target : undefined;
    }, () => finishSignIn(challenge.mfaToken, proof).then(() => true));
    if (done === true) return onSignedIn();
    if (spent(failure)) return;
    target.input.value = '';
  });

  const passkeyStatus = statusArea();
  const passkeyButton = h('button', { type: 'button' }, 'Use a passkey');
  passkeyButton.addEventListener('click', async () => {
    clear(passkeyStatus);
    passkeyButton.disabled = true;
    try {
      let assertion: unknown;
      try {
        assertion = await authenticate(challenge.passkeyOptions);
      } catch (error) {
        // The browser's ceremony failed (cancelled, timed out): nothing was sent, the mfaToken stands.
        showNotice(passkeyStatus, describeCeremonyError(error));
        return;
      }
      try {
        await finishSignIn(challenge.mfaToken, { passkey: assertion });
      } catch (error) {
        // A refused assertion is counted as a wrong code (1117); its detail speaks of codes.
        if (codeOf(error) === MFA_CODE_WRONG) showError(passkeyStatus, new ApiError({ status: 401, title: 'Passkey refused', detail: 'The gateway did not accept this passkey: it must be one registered for your organization, and it must verify you (fingerprint, face or PIN). Try again, or use another way.' }));
        else if (!spent(error)) showError(passkeyStatus, error);
        return;
      }
      onSignedIn();
    } finally {
      passkeyButton.disabled = false;
    }
  });
  const passkeyPart =
    hasPasskey && webAuthnAvailable()
      ? h('fieldset', {}, h('legend', {}, 'With a passkey'), h('p', { class: 'hint' }, 'On this device, your phone or a security key.'), passkeyButton, passkeyStatus)
      : null;

  const restart = h('button', { type: 'button', class: 'link', onclick: () => onRestart('Signed out: sign in again.') }, 'Start over');
  if (!hasTotp && !hasRecovery && passkeyPart === null) showNotice(status, 'This browser cannot finish this sign-in: your organization’s second factor is a passkey and the browser offers no WebAuthn. Use another browser, or a recovery code through the API.');
  // The passkey first where there is one: it cannot be phished, a typed code can.
  queueMicrotask(() => (passkeyPart !== null ? passkeyButton : (hasTotp ? code : hasRecovery ? recovery : undefined)?.input)?.focus());
  return h(
    'div',
    {},
    h('p', {}, 'Your organization has a second factor: confirm it is you to finish signing in.'),
    passkeyPart,
    hasTotp || hasRecovery ? form : status,
    restart,
  );
}
