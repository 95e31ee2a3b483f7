/**
 * The JSON schemas of passkeys (issue 32): the WebAuthn options the gateway answers (as
 * @simplewebauthn/server makes them, for @simplewebauthn/browser's startRegistration and
 * startAuthentication) and the responses it takes back. Strings are bounded; the objects admit
 * members a browser may add, since the library reads only what it knows.
 */
import { Type, type Static } from '@sinclair/typebox';

const B64 = (maxLength: number, description?: string) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$', ...(description !== undefined && { description }) });
/** A credential id as browsers send it: base64url, at most 1023 bytes (WebAuthn Level 3). */
const CredentialId = B64(1400, 'The credential id, base64url.');
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 });
const Descriptor = Type.Object({ id: Type.String(), type: Type.String(), transports: Type.Optional(Transports) });
const Extensions = Type.Object({}, { additionalProperties: true });

export const PasskeyName = Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', description: 'A name of the organization\'s choosing, 1 to 64 characters, not only spaces; no control, bidirectional or invisible format character (as every name: docs/api.md, "Names").' });

export const PasskeyCreationOptions = Type.Object(
  {
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
    challenge: Type.String(),
    pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.String() })),
    timeout: Type.Optional(Type.Integer()),
    excludeCredentials: Type.Optional(Type.Array(Descriptor)),
    authenticatorSelection: Type.Optional(Type.Object({}, { additionalProperties: true })),
    hints: Type.Optional(Type.Array(Type.String())),
    attestation: Type.Optional(Type.String()),
    attestationFormats: Type.Optional(Type.Array(Type.String())),
    extensions: Type.Optional(Extensions),
  },
  { additionalProperties: true, description: 'PublicKeyCredentialCreationOptionsJSON: pass it to startRegistration (@simplewebauthn/browser) or PublicKeyCredential.parseCreationOptionsFromJSON.' },
);

export const PasskeyRequestOptions = Type.Object(
  {
    challenge: Type.String(),
    timeout: Type.Optional(Type.Integer()),
    rpId: Type.Optional(Type.String()),
    allowCredentials: Type.Optional(Type.Array(Descriptor)),
    userVerification: Type.Optional(Type.String()),
    hints: Type.Optional(Type.Array(Type.String())),
    extensions: Type.Optional(Extensions),
  },
  { additionalProperties: true, description: 'PublicKeyCredentialRequestOptionsJSON over the organization\'s passkeys (user verification required): pass it to startAuthentication (@simplewebauthn/browser).' },
);

const Common = {
  id: CredentialId,
  rawId: CredentialId,
  type: Type.Literal('public-key'),
  clientExtensionResults: Type.Object({}, { additionalProperties: true }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
};

export const RegistrationResponse = Type.Object(
  {
    ...Common,
    response: Type.Object(
      {
        clientDataJSON: B64(4096),
        attestationObject: B64(32768),
        authenticatorData: Type.Optional(B64(32768)),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(B64(4096)),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true, description: 'RegistrationResponseJSON, as startRegistration (@simplewebauthn/browser) returns it.' },
);
export type RegistrationResponse = Static<typeof RegistrationResponse>;

export const AuthenticationResponse = Type.Object(
  {
    ...Common,
    response: Type.Object(
      {
        clientDataJSON: B64(4096),
        authenticatorData: B64(4096),
        signature: B64(2048),
        userHandle: Type.Optional(B64(256)),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true, description: 'AuthenticationResponseJSON, as startAuthentication (@simplewebauthn/browser) returns it.' },
);
export type AuthenticationResponse = Static<typeof AuthenticationResponse>;

export const PasskeySchema = Type.Object({
  id: Type.String({ description: 'The credential id (base64url): the path parameter of PATCH and DELETE.' }),
  name: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'The last login it finished; null before the first.' }),
});
