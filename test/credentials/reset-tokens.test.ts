import t from 'tap';
import { newResetToken, resetTokenHash } from '../../src/credentials/reset-tokens.js';
import { shardTagIn, shardTagOf } from '../../src/store/shard-tag.js';

t.test('a reset token: agr_, its organization\'s tag, 128 random bits; the store gets a tagged digest only', async (t) => {
  const orgId = `org_${'ab'.repeat(16)}`;
  const { token, tokenHash } = newResetToken(orgId);
  t.match(token, new RegExp(`^agr_${shardTagOf(orgId)}_[A-Za-z0-9_-]{22}$`));
  t.equal(Buffer.from(token.slice(8), 'base64url').length, 16, '16 random bytes');
  t.equal(shardTagIn(tokenHash), shardTagOf(orgId), 'the hash carries the tag');
  t.notOk(tokenHash.includes(token.slice(8)), 'and not the secret');
  t.equal(resetTokenHash(token), tokenHash, 'a presented token finds it');
  t.not(newResetToken(orgId).token, token, 'a new one each time');
  for (const bad of ['', 'agr_', token.slice(0, -1), `${token}x`, token.replace('agr_', 'agk_'), `agr_ABC_${token.slice(8)}`, ` ${token}`]) {
    t.equal(resetTokenHash(bad), undefined, `not a token: ${JSON.stringify(bad.slice(0, 12))}`);
  }
});
