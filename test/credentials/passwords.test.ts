import t from 'tap';
import { createDummyVerifier, hashPassword, verifyPassword } from '../../src/credentials/passwords.js';

const PASSWORD = 'correct horse battery staple';

t.test('hashes are argon2id at m=19456, t=2, p=1, salted', async (t) => {
  const hash = await hashPassword(PASSWORD);
  t.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
  t.notOk(hash.includes(PASSWORD));
  t.not(await hashPassword(PASSWORD), hash, 'a fresh salt each time');
});

t.test('verify: the right password only', async (t) => {
  const hash = await hashPassword(PASSWORD);
  t.equal(await verifyPassword(hash, PASSWORD), true);
  t.equal(await verifyPassword(hash, PASSWORD + ' '), false);
  t.equal(await verifyPassword(hash, PASSWORD.toUpperCase()), false);
  t.equal(await verifyPassword(hash, ''), false);
  const unicode = 'pässwörd-✓-0123';
  t.equal(await verifyPassword(await hashPassword(unicode), unicode), true);
});

t.test('a corrupt hash is a false, not a throw', async (t) => {
  const hash = await hashPassword(PASSWORD);
  for (const corrupt of ['', 'not-a-hash', hash.slice(0, 20), hash.replace('$argon2id$', '$argon2xx$'), '$argon2id$v=19$m=19456,t=2,p=1$$']) {
    t.equal(await verifyPassword(corrupt, PASSWORD), false, JSON.stringify(corrupt));
  }
  // The hash part changed: a well-formed hash of something else.
  const parts = hash.split('$');
  const last = parts[parts.length - 1]!;
  parts[parts.length - 1] = (last[0] === 'A' ? 'B' : 'A') + last.slice(1);
  t.equal(await verifyPassword(parts.join('$'), PASSWORD), false);
});

t.test('the dummy verifier always says false', async (t) => {
  const dummy = await createDummyVerifier();
  for (const password of [PASSWORD, '', 'dummy-', 'x'.repeat(100)]) t.equal(await dummy(password), false);
});

t.test('concurrent hashes queue for their slots and all complete', async (t) => {
  const { hashPassword: h, verifyPassword: v } = await import('../../src/credentials/passwords.js');
  const hashes = await Promise.all(Array.from({ length: 8 }, (_, i) => h(`password-number-${i}`)));
  const results = await Promise.all(hashes.map((hashed, i) => v(hashed, `password-number-${i}`)));
  t.same(results, Array(8).fill(true), 'every queued hash and verify completed correctly');
  t.equal(await v(hashes[0]!, 'password-number-1'), false);
});
