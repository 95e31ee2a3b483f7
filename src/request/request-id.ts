/**
 * The request id: the client's x-request-id when sane, else a fresh UUID (version 4, RFC 9562); on
 * every answer and forwarded upstream, and in the access line of both ports.
 *
 * HAND-WRITTEN FOR SPEED (issue 30): a generated id is made on every request that arrives without
 * one (every request an edge proxy asks about, unless it sends its own), and node's randomUUID()
 * builds each one by concatenating 20 pieces: ~585 bytes of garbage per id, 17 % of all the
 * authorization port's allocation per decision (V8's sampling heap profiler, collected objects
 * included), and 143–150 ns per id. Here 128 ids are drawn at once from node's CSPRNG
 * (randomFillSync), written as ASCII into one buffer, read as one string, and handed out as slices
 * of it: 45–46 ns per id and ~70 bytes (measured on Node 24, docs/performance.md, issue 30's eighth
 * step). The bits are RFC 9562's: the version nibble 4, the variant bits 10, the other 122 random;
 * test/request/request-id.test.ts checks every id against the `uuid` package's v4 of the same bytes.
 */
import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Ids drawn per refill. */
const BATCH = 128;
const UUID_LENGTH = 36;
const HEX = Buffer.from('0123456789abcdef', 'latin1');
const DASH = 0x2d;

/** A UUID's text (lower-case, dashed) for 16 bytes, its version and variant bits set first: the formatter, exported for its test. */
export function formatUuidV4(random: Uint8Array, from: number, into: Uint8Array, at: number): void {
  random[from + 6] = (random[from + 6]! & 0x0f) | 0x40;
  random[from + 8] = (random[from + 8]! & 0x3f) | 0x80;
  let o = at;
  for (let i = 0; i < 16; i++) {
    // 8-4-4-4-12 hex digits: a dash before bytes 4, 6, 8 and 10.
    if (i === 4 || i === 6 || i === 8 || i === 10) into[o++] = DASH;
    const byte = random[from + i]!;
    into[o++] = HEX[byte >> 4]!;
    into[o++] = HEX[byte & 15]!;
  }
}

// Request ids are no secrets (each is sent on its answer): the batch's bytes and text may stay in memory.
const random = Buffer.allocUnsafeSlow(16 * BATCH);
const text = Buffer.allocUnsafeSlow(UUID_LENGTH * BATCH);
let batch = '';
let next = BATCH;

/** A fresh random UUID (version 4), as crypto.randomUUID() makes it. */
export function newRequestId(): string {
  if (next === BATCH) {
    randomFillSync(random);
    for (let i = 0; i < BATCH; i++) formatUuidV4(random, 16 * i, text, UUID_LENGTH * i);
    batch = text.toString('latin1');
    next = 0;
  }
  const start = next++ * UUID_LENGTH;
  // A slice of the batch's string: an id kept for long keeps the batch's 4.6 KB with it; ids live as long as their request.
  return batch.slice(start, start + UUID_LENGTH);
}

/** A client's x-request-id when it is sane (so traces join up), a fresh UUID otherwise. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : newRequestId();
}
