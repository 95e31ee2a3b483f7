// The keys of the identity assertion: the one that signs, and the JWKS upstreams verify with.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

/** The algorithms an identity key may have: P-256 (ES256) or Ed25519 (EdDSA), both in jose and every JWT library worth using. */
export type IdentityAlgorithm = 'ES256' | 'EdDSA';

export type SigningKey = Readonly<{ kid: string; alg: IdentityAlgorithm; privateKey: KeyObject; publicJwk: JWK }>;

/** What upstreams fetch: RFC 7517 §5. */
export type Jwks = Readonly<{ keys: readonly JWK[] }>;

export type IdentityKeys = Readonly<{ signing: SigningKey; jwks: Jwks }>;

/**
 * A key's text (PEM or JWK) as a node KeyObject, private when it is one; throws a message that
 * never quotes the text (it may be a private key).
 */
function keyObject(text: string, want: 'private' | 'public'): KeyObject {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('{')) {
      const jwk = JSON.parse(trimmed) as JsonWebKey;
      // A private JWK given as a published key: its public half.
      return want === 'private' ? createPrivateKey({ key: jwk, format: 'jwk' }) : createPublicKey({ key: jwk, format: 'jwk' });
    }
    return want === 'private' ? createPrivateKey(trimmed) : createPublicKey(trimmed);
  } catch {
    throw new Error(want === 'private' ? 'is not a private key in PEM or JWK form' : 'is not a key in PEM or JWK form');
  }
}

function algorithmOf(key: KeyObject): IdentityAlgorithm {
  if (key.asymmetricKeyType === 'ed25519') return 'EdDSA';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  throw new Error('is neither a P-256 (ES256) nor an Ed25519 (EdDSA) key');
}

/** Checks a key's text without keeping it (config/load.ts): the reason it is refused, or undefined. */
export function keyProblem(text: string, want: 'private' | 'public'): string | undefined {
  try {
    algorithmOf(keyObject(text, want));
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** A public key as the JWKS lists it: its thumbprint (RFC 7638) as `kid`, `alg`, `use: sig`. */
async function published(key: KeyObject): Promise<JWK> {
  const alg = algorithmOf(key);
  const jwk = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }) as JWK;
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg, use: 'sig' };
}

/**
 * The signing key from its text (or, with none, a P-256 key made up for this process: development)
 * and the JWKS: the signing key's public half first, then each published key, without repeats.
 */
export async function loadIdentityKeys(signingKey: string | undefined, publishedKeys: readonly string[]): Promise<IdentityKeys> {
  const privateKey = signingKey === undefined ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey : keyObject(signingKey, 'private');
  const publicJwk = await published(privateKey);
  const keys = [publicJwk];
  for (const text of publishedKeys) {
    const jwk = await published(keyObject(text, 'public'));
    if (!keys.some((known) => known.kid === jwk.kid)) keys.push(jwk);
  }
  return {
    signing: { kid: publicJwk.kid!, alg: algorithmOf(privateKey), privateKey, publicJwk },
    jwks: Object.freeze({ keys: Object.freeze(keys) }),
  };
}
