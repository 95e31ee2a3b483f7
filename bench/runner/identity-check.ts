/**
 * The identity assertion, checked through the keys: the bench upstream echoes only the
 * organization id (its hot path stays one header read), so `x-authgate-identity` itself is not
 * seen there; each gateway's JWKS (ops port) is.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { send } from '../lib/http.js';
import type { Gateway } from './processes.js';

/**
 * The main gateway's JWKS must list the bench's key first: it signs with it. A gateway without the
 * JWKS route (an older build via --gateway) is noted, not refused. The gateway with the assertion
 * off must not serve one. Returns the note line.
 */
export async function checkIdentityKeys(main: Gateway, noIdentity: Gateway | undefined, publicJwk: JsonWebKey | undefined): Promise<string> {
  const path = '/.well-known/jwks.json';
  if (noIdentity !== undefined) {
    const answer = await send(`${noIdentity.opsUrl}${path}`);
    if (answer.status === 200) throw new Error(`${noIdentity.name}: serves a JWKS, so the identity assertion is not off`);
  }
  const answer = await send(`${main.opsUrl}${path}`);
  if (publicJwk === undefined) {
    if (answer.status === 200) throw new Error(`${main.name}: serves a JWKS although --env AUTHGATE_IDENTITY_ASSERTION=off`);
    return 'identity assertion: off in every gateway (--env AUTHGATE_IDENTITY_ASSERTION=off)';
  }
  if (answer.status === 404) return `identity assertion: ${main.name} serves no JWKS (a build without the assertion?): not measured`;
  if (answer.status !== 200) throw new Error(`${main.name}: GET ${path} answered ${answer.status}`);
  const first = (JSON.parse(answer.body) as { keys?: JsonWebKey[] }).keys?.[0];
  const same = (jwk: JsonWebKey | undefined) => {
    try {
      return jwk !== undefined && createPublicKey({ key: jwk, format: 'jwk' }).equals(createPublicKey({ key: publicJwk, format: 'jwk' }));
    } catch {
      return false;
    }
  };
  if (!same(first)) throw new Error(`${main.name}: its JWKS does not start with the bench's identity key (AUTHGATE_IDENTITY_KEY_FILE not used?)`);
  const kid = (first as { kid?: string }).kid ?? '?';
  return `identity assertion: on in ${main.name}, signing with the bench's P-256 key (kid ${kid}, checked through its JWKS; the bench upstream does not echo x-authgate-identity)${noIdentity === undefined ? '' : `; off in ${noIdentity.name} (no JWKS)`}`;
}
