/**
 * A software authenticator for the passkey tests (issue 32): an ES256 key pair from node:crypto,
 * attestation `none`, authenticator data with the flags and counter the test chooses, CBOR by the
 * small encoder below. It builds what @simplewebauthn/browser's startRegistration and
 * startAuthentication return, so the gateway sees what a browser would send.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 0x100) return Buffer.from([(major << 5) | 24, value]);
  if (value < 0x10000) return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(value, 1);
  return out;
}

/** Definite-length CBOR (RFC 8949) of integers, text, bytes, arrays and maps: all COSE and attestation need. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const text = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64u = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export type Ceremony = { origin: string; rpId?: string; flags?: number; type?: string };

export class SoftAuthenticator {
  readonly id: string;
  private readonly key: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  /** The signature counter: each assertion adds one unless the test sets it. */
  counter: number;

  constructor(options: { counter?: number } = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    this.publicJwk = { x: jwk.x!, y: jwk.y! };
    this.id = b64u(randomBytes(16));
    this.counter = options.counter ?? 0;
  }

  private coseKey(): Buffer {
    return cbor(new Map<number, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(this.publicJwk.x, 'base64url')], [-3, Buffer.from(this.publicJwk.y, 'base64url')]]));
  }

  private authData(rpId: string, flags: number, attested: boolean): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    const parts: Buffer[] = [sha256(rpId), Buffer.from([flags | (attested ? FLAG_AT : 0)]), counter];
    if (attested) {
      const id = Buffer.from(this.id, 'base64url');
      const length = Buffer.alloc(2);
      length.writeUInt16BE(id.length);
      parts.push(Buffer.alloc(16), length, id, this.coseKey());
    }
    return Buffer.concat(parts);
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** What startRegistration returns for these creation options. */
  register(options: { challenge: string; rp: { id?: string } }, ceremony: Ceremony) {
    const rpId = ceremony.rpId ?? options.rp.id ?? 'localhost';
    const authData = this.authData(rpId, ceremony.flags ?? FLAG_UP | FLAG_UV, true);
    const attestationObject = cbor(new Map<string, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(this.clientData(ceremony.type ?? 'webauthn.create', options.challenge, ceremony.origin)),
        attestationObject: b64u(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** What startAuthentication returns for these request options (the counter moves on first, by `step`). */
  assert(options: { challenge: string; rpId?: string }, ceremony: Ceremony & { step?: number; userHandle?: string }) {
    this.counter += ceremony.step ?? 1;
    const rpId = ceremony.rpId ?? options.rpId ?? 'localhost';
    const authenticatorData = this.authData(rpId, ceremony.flags ?? FLAG_UP | FLAG_UV, false);
    const clientDataJSON = this.clientData(ceremony.type ?? 'webauthn.get', options.challenge, ceremony.origin);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.key);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authenticatorData),
        signature: b64u(signature),
        ...(ceremony.userHandle !== undefined && { userHandle: ceremony.userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
