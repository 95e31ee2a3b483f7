import t from 'tap';
import { mfaTokenHash, newMfaToken } from '../../src/credentials/mfa-tokens.js';
import { newResetToken, resetTokenHash } from '../../src/credentials/reset-tokens.js';
import { shardTagIn, shardTagOf } from '../../src/store/shard-tag.js';

/** credentials/sharded-token.ts: the one shape of the password-reset (agr_) and second-factor (agm_) tokens. */
const KINDS = [
  { prefix: 'agr_', issue: newResetToken, hashOf: resetTokenHash, other: mfaTokenHash },
  { prefix: 'agm_', issue: newMfaToken, hashOf: mfaTokenHash, other: resetTokenHash },
];

for (const { prefix, issue, hashOf, other } of KINDS) {
  t.test(`${prefix}: its organization's tag, 128 random bits; the store gets a tagged digest only`, async (t) => {
    const orgId = `org_${'cd'.repeat(16)}`;
    const { token, tokenHash } = issue(orgId);
    t.match(token, new RegExp(`^${prefix}${shardTagOf(orgId)}_[A-Za-z0-9_-]{22}$`));
    t.equal(Buffer.from(token.slice(prefix.length + shardTagOf(orgId).length + 1), 'base64url').length, 16, '16 random bytes');
    t.equal(shardTagIn(tokenHash), shardTagOf(orgId), 'the hash carries the tag');
    t.equal(hashOf(token), tokenHash, 'a presented token finds it');
    t.not(issue(orgId).token, token, 'a new one each time');
    t.equal(other(token), undefined, 'the other kind does not take it');
    const tagged = token.slice(0, prefix.length + shardTagOf(orgId).length);
    for (const bad of ['', prefix, token.slice(0, -1), `${token}x`, `${tagged}x${token.slice(tagged.length)}`, `${prefix}ABCDEFGHIJ_${token.slice(-22)}`, ` ${token}`]) {
      t.equal(hashOf(bad), undefined, `not a token: ${JSON.stringify(bad.slice(0, 16))}`);
    }
  });
}
