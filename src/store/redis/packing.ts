/**
 * How records are written into Redis values, compactly: the layout keeps each API key and session
 * to one short hash field (and one index entry), and Redis keeps a hash of up to 128 entries with
 * values up to 64 bytes in one listpack, several times smaller than a hash table. Ids and times
 * the gateway makes are packed to fit; anything else is kept as written, marked with `=`.
 * Measured (`npm run bench -- --only scale`, docs/performance.md): about 230 B of Redis memory per
 * API key and 130 B per session, against 595 B and 310 B for one hash per record.
 *
 * Every packed form is free of spaces, so a value of several parts splits on its spaces.
 */

/** `org_`/`key_` + 32 hex, as services make them: 16 bytes, written as 22 base64url. */
const GENERATED_ID = /^([a-z]+)_([0-9a-f]{32})$/;
const PACKED_ID = /^([a-z]+)\.([A-Za-z0-9_-]{22})$/;

export function packId(id: string): string {
  const generated = GENERATED_ID.exec(id);
  if (generated !== null) return `${generated[1]}.${Buffer.from(generated[2]!, 'hex').toString('base64url')}`;
  return `=${verbatim(id, 'id')}`;
}

/** A key id as packed into its index field; undefined for an id no key can have (a space in it). */
export function packedKeyIdOrUndefined(keyId: string): string | undefined {
  try {
    return packId(keyId);
  } catch {
    return undefined;
  }
}

export function unpackId(packed: string): string {
  if (packed.startsWith('=')) return packed.slice(1);
  const match = PACKED_ID.exec(packed);
  if (match === null) throw malformed('id');
  return `${match[1]}_${Buffer.from(match[2]!, 'base64url').toString('hex')}`;
}

/** An ISO time as Date#toISOString writes it becomes its epoch milliseconds in base 36 (8 characters). */
export function packTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isSafeInteger(ms) && ms >= 0 && new Date(ms).toISOString() === iso) return ms.toString(36);
  return `=${verbatim(iso, 'time')}`;
}

export function unpackTime(packed: string): string {
  if (packed.startsWith('=')) return packed.slice(1);
  const ms = parseInt(packed, 36);
  if (!/^[0-9a-z]+$/.test(packed) || !Number.isSafeInteger(ms)) throw malformed('time');
  return new Date(ms).toISOString();
}

/** Epoch milliseconds: base 36 for an integer (Lua reads it with tonumber(x, 36)), else `=` decimal. */
export function packMs(ms: number): string {
  return Number.isSafeInteger(ms) && ms >= 0 ? ms.toString(36) : `=${String(ms)}`;
}

export function unpackMs(packed: string): number {
  const value = packed.startsWith('=') ? Number(packed.slice(1)) : parseInt(packed, 36);
  if (packed === '' || packed === '=' || !Number.isFinite(value)) throw malformed('time');
  return value;
}

/** The 22 characters of an API key's digest, as the lookup hash carries them after its tag. */
export const DIGEST_LENGTH = 22;
export const DIGEST = /^[A-Za-z0-9_-]{22}$/;

function verbatim(text: string, what: string): string {
  // A space would split the value; the services never make one, so it is a caller's mistake.
  if (/\s/.test(text) || text === '') throw new Error(`a record's ${what} must be non-empty and without spaces for the Redis store`);
  return text;
}

function malformed(what: string): Error {
  return new Error(`malformed record in Redis: bad ${what}`);
}
