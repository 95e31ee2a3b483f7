/**
 * Changing and rolling an API key on Redis, each in ONE script that reads the key, checks the
 * change against it as it is stored at that moment, and writes (issue 26). They used to read in
 * TypeScript and write with a compare-and-set script that gave up after five races, so a burst
 * of renames of one key answered 503 and counted store errors: contention is not an outage. A
 * script runs alone on its shard, so parallel changes now all take effect one after another,
 * each refused only for what it asks against the key as the ones before it left it.
 *
 * The rule is api-keys.ts#changedTerms, written again in Lua (scripts/changeApiKey.lua and
 * scripts/rollApiKey.lua, parsing with scripts/lib/entryParts.lua) over the stored text (replies.ts:
 * the index entry `<digest><created> <prefix>[ <terms or -> [<name>]]`, the terms
 * `<expiry or ->[<scopes>]` (scopes `~<names, sorted, by ,>`, or the legacy `/<bit set, base 36>` for
 * sets of the five original names), the hot-path value `<org> <key>[ <terms>]`); the contract
 * suite (test/store/store-contract.ts) holds both stores to the same answers.
 */
import { restAfterOrganizationTag, shardTagOf } from '../shard-tag.js';
import { storedScopes, type ApiKeyChange, type ApiKeyChangeRefusal, type ApiKeyRoll, type ApiKeySummary, type RolledApiKey, type Revoked } from '../store.js';
import type { ShardKeys } from './keys.js';
import { DIGEST, DIGEST_LENGTH, packedKeyIdOrUndefined, packId, packMs, packTime } from './packing.js';
import { apiKeySummaryReply, keyIndexField, keyUseField, scopesPart, unexpected } from './replies.js';
import type { Script } from './scripts.js';

/** What the two methods need of the store around them (redis/store.ts). */
export type KeyChangeContext = Readonly<{
  run: Readonly<Record<'changeApiKey' | 'rollApiKey', Script>>;
  /** The organization's shard and its id as packed into names and values. */
  place: (orgId: string) => { shard: ShardKeys; packed: string };
  /** redis/store.ts#announced: the script's message to PUBLISH, settled with the step. */
  announced: <T>(work: (channel: string, head: string) => Promise<T>) => Promise<T>;
}>;

/** One reply of the two scripts: a list whose first item is a word. */
function replyOf(reply: unknown, what: string): [string, ...unknown[]] {
  if (!Array.isArray(reply) || typeof reply[0] !== 'string') throw unexpected(what);
  return reply as [string, ...unknown[]];
}

/** Store#changeApiKey on Redis: one script (scripts/changeApiKey.lua). */
export async function changeApiKey(
  context: KeyChangeContext,
  orgId: string,
  keyId: string,
  change: ApiKeyChange,
): Promise<{ key: ApiKeySummary; revoked: Revoked | undefined } | ApiKeyChangeRefusal> {
  if (change.name === '') throw new Error('an API key\'s name must not be empty (null removes it)');
  const packedKeyId = packedKeyIdOrUndefined(keyId);
  if (packedKeyId === undefined) return 'not-found';
  const { shard, packed } = context.place(orgId);
  const scopes = change.scopes === undefined ? undefined : storedScopes(change.scopes);
  const tag = shardTagOf(orgId);
  const reply = replyOf(await context.announced((channel, head) => context.run.changeApiKey([shard.organization(packed), shard.apiKeys], [
    keyIndexField(packedKeyId),
    keyUseField(packedKeyId),
    change.name === undefined ? 'keep' : change.name === null ? 'drop' : 'set',
    change.name ?? '',
    scopes === undefined ? '' : scopes.join(','),
    scopes === undefined ? '' : scopesPart(scopes),
    '',
    change.expiresAt === undefined ? '' : change.expiresAt,
    change.expiresAt === undefined ? '' : packMs(change.expiresAt),
    tag,
    packed,
    packedKeyId,
    channel,
    head,
  ])), 'changeApiKey');
  const [word, entry, lastUse, termsChanged] = reply;
  if (word === 'not-found' || word === 'scopes-wider' || word === 'expiry-later') return word;
  if (word !== 'changed' || typeof entry !== 'string') throw unexpected('changeApiKey');
  const key = apiKeySummaryReply(packedKeyId, [entry, lastUse === '' ? null : lastUse], 'changeApiKey')!;
  const hash = `${tag}.${entry.slice(0, DIGEST_LENGTH)}`;
  return { key, revoked: termsChanged === 1 ? { kind: 'api_key', cacheKey: hash } : undefined };
}

/** Store#rollApiKey on Redis: one script (scripts/rollApiKey.lua). */
export async function rollApiKey(context: KeyChangeContext, orgId: string, keyId: string, roll: ApiKeyRoll): Promise<RolledApiKey | 'not-found'> {
  const successorDigest = restAfterOrganizationTag(roll.successor.hash, orgId, 'the API key');
  if (!DIGEST.test(successorDigest)) throw new Error('an API key lookup hash is <tag>.<22 base64url>');
  const { displayPrefix } = roll.successor;
  if (displayPrefix === '' || /\s/.test(displayPrefix)) throw new Error('an API key needs a display prefix without spaces');
  const packedSuccessorId = packId(roll.successor.id);
  const packedKeyId = packedKeyIdOrUndefined(keyId);
  if (packedKeyId === undefined) return 'not-found';
  const { shard, packed } = context.place(orgId);
  const tag = shardTagOf(orgId);
  const ends = roll.rolledKeyEnds;
  const reply = replyOf(await context.announced((channel, head) => context.run.rollApiKey([shard.organization(packed), shard.apiKeys], [
    keyIndexField(packedKeyId),
    keyUseField(packedKeyId),
    ends === 'now' ? '' : ends,
    ends === 'now' ? '' : packMs(ends),
    keyIndexField(packedSuccessorId),
    `${successorDigest}${packTime(roll.successor.createdAt)} ${displayPrefix}`,
    roll.successor.expiresAt === undefined ? '' : packMs(roll.successor.expiresAt),
    packed,
    packedKeyId,
    packedSuccessorId,
    tag,
    channel,
    head,
  ])), 'rollApiKey');
  const [word, successorEntry, rolledEntry, lastUse, digest] = reply;
  if (word === 'not-found') return word;
  if (word !== 'rolled' || typeof successorEntry !== 'string' || typeof rolledEntry !== 'string' || typeof digest !== 'string') throw unexpected('rollApiKey');
  const successor = apiKeySummaryReply(packedSuccessorId, [successorEntry, null], 'rollApiKey')!;
  const rolled = rolledEntry === '' ? undefined : apiKeySummaryReply(packedKeyId, [rolledEntry, lastUse === '' ? null : lastUse], 'rollApiKey');
  // The rolled key's cached copies go everywhere: its end changed, or it is gone.
  return { successor, rolled, revoked: { kind: 'api_key', cacheKey: `${tag}.${digest}` } };
}
