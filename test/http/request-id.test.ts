import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { requestIdOf } from '../../src/http/request-id.js';

/** http/request-id.ts: a client's x-request-id when it is sane, a fresh UUID otherwise. */

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
