import { createHash } from 'node:crypto';
import t from 'tap';
import { secretsEqual, sha256Base64url } from '../../src/credentials/digest.js';

/** credentials/digest.ts: the digests keys and token memos are stored under, and the one secret comparison. */

t.test('sha256 in base64url, as node computes it', async (t) => {
  for (const value of ['', 'agk_test_x', 'é ünïcödé', 'x'.repeat(10_000)]) {
    t.equal(sha256Base64url(value), createHash('sha256').update(value).digest('base64url'));
  }
  t.equal(Buffer.from(sha256Base64url('abc'), 'base64url').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad', 'the FIPS 180-2 test vector');
});

t.test('secretsEqual: equal only when equal, whatever the lengths', async (t) => {
  t.ok(secretsEqual('same-secret', 'same-secret'));
  t.ok(secretsEqual('', ''));
  t.notOk(secretsEqual('same-secret', 'same-secreT'));
  t.notOk(secretsEqual('same-secret', 'same-secret '), 'one more character');
  t.notOk(secretsEqual('same-secret', 'same-secre'), 'a prefix');
  t.notOk(secretsEqual('', 'x'));
});
