import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { formatUuidV4, newRequestId, requestIdOf } from '../../src/request/request-id.js';

/** request/request-id.ts: a client's x-request-id when it is sane, a fresh UUID otherwise; the UUIDs made by hand, checked against the uuid package. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withHeader = (value: string | string[] | undefined) => ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

t.test('sane ids are kept, so traces join up', async (t) => {
  for (const id of ['abc', 'trace-1.2:3_4', 'A'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e']) {
    t.equal(requestIdOf(withHeader(id)), id);
  }
});

t.test('anything else becomes a fresh UUID, different each time', async (t) => {
  const cases: Array<string | string[] | undefined> = [undefined, '', 'A'.repeat(129), 'has space', 'new\nline', 'quote"', '<script>', 'é', ['a', 'b']];
  const seen = new Set<string>();
  for (const value of cases) {
    const id = requestIdOf(withHeader(value));
    t.match(id, UUID, JSON.stringify(value)?.slice(0, 30) ?? 'undefined');
    seen.add(id);
  }
  t.equal(seen.size, cases.length);
});

t.test('the hand-written UUID formatter writes what the uuid package writes for the same 16 bytes', async (t) => {
  const { v4 } = await import('uuid');
  const into = Buffer.alloc(36 + 5);
  for (let n = 0; n < 20_000; n++) {
    const bytes = randomBytes(16);
    // Edge bytes too: all zero and all one, where the version and variant bits show most.
    if (n === 0) bytes.fill(0);
    if (n === 1) bytes.fill(0xff);
    const expected = v4({ random: Uint8Array.from(bytes) });
    formatUuidV4(Uint8Array.from(bytes), 0, into, 5);
    if (into.toString('latin1', 5, 41) !== expected) return t.fail(`bytes ${bytes.toString('hex')}: ${into.toString('latin1', 5, 41)} ≠ ${expected}`);
  }
  t.pass('20,000 inputs alike');
});

t.test('generated ids are version-4 UUIDs, all different, across many refills, every random digit in use', async (t) => {
  const { validate, version } = await import('uuid');
  const seen = new Set<string>();
  // Per place of the text, which digits were seen: the random places must show all 16, the variant's place 8–b only.
  const digits = Array.from({ length: 36 }, () => new Set<string>());
  const count = 128 * 200 + 7;
  for (let i = 0; i < count; i++) {
    const id = newRequestId();
    if (!UUID.test(id) || !validate(id) || version(id) !== 4) return t.fail(`not a v4 UUID: ${id}`);
    seen.add(id);
    for (let p = 0; p < 36; p++) digits[p]!.add(id[p]!);
  }
  t.equal(seen.size, count, 'no id twice');
  for (let p = 0; p < 36; p++) {
    const want = [8, 13, 18, 23].includes(p) ? 1 : p === 14 ? 1 : p === 19 ? 4 : 16;
    t.equal(digits[p]!.size, want, `place ${p}: ${[...digits[p]!].sort().join('')}`);
  }
});
