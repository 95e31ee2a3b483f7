// The WebAuthn ceremonies, run by the console's own script (the CSP stays strict: no inline code,
// nothing from another origin): @simplewebauthn/browser's startRegistration and
// startAuthentication, from the library's own single-file build served beside this file. Its ESM
// build is twenty files in folders; the console serves one flat folder of known files, so the
// bundle is vendored as the library ships it and read from the global it defines.
import './simplewebauthn-browser.js';
import type { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';

type Library = Readonly<{
  startRegistration: typeof startRegistration;
  startAuthentication: typeof startAuthentication;
  browserSupportsWebAuthn: typeof browserSupportsWebAuthn;
}>;

const library = (globalThis as unknown as { SimpleWebAuthnBrowser: Library }).SimpleWebAuthnBrowser;

/** Registers a new passkey with the options POST /auth/mfa/passkeys/registration answered. */
export const register = (optionsJSON: unknown) => library.startRegistration({ optionsJSON: optionsJSON as Parameters<typeof startRegistration>[0]['optionsJSON'] });

/** Signs the login's challenge (the 1116 answer's passkeyOptions) with a passkey. */
export const authenticate = (optionsJSON: unknown) => library.startAuthentication({ optionsJSON: optionsJSON as Parameters<typeof startAuthentication>[0]['optionsJSON'] });

export const webAuthnAvailable = (): boolean => library.browserSupportsWebAuthn();

/**
 * What to tell a person when the browser's ceremony failed: cancelled or timed out is the common
 * case (NotAllowedError), and none of it is the server's answer.
 */
export function describeCeremonyError(error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  if (name === 'NotAllowedError') return 'The passkey was not used: the request was cancelled, timed out, or your device could not verify you. Try again, or use another way.';
  if (name === 'InvalidStateError') return 'This device already holds a passkey for your organization.';
  if (name === 'NotSupportedError') return 'This browser or device cannot use passkeys.';
  if (name === 'SecurityError') return 'Passkeys need the console on its configured address (HTTPS or localhost).';
  return `The passkey could not be used${error instanceof Error && error.message !== '' ? `: ${error.message}` : ''}.`;
}
