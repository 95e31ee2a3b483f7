/**
 * The Lua scripts, one per Store method that takes more than one command, each in its own file
 * under scripts/ named after the method it serves (its KEYS, ARGV and reply at the top of the
 * file; script-files.ts reads them), and their definition on a client.
 *
 * One Lua script per multi-key step, so each Store method is atomic. Every key a script touches
 * carries one shard tag (keys.ts): an organization's, so a script may also name keys of that
 * organization it finds in a value (a `stem` ARGV) and still run on Redis Cluster. A step that
 * must cross tags (an e-mail claim and its organization) is several steps, ordered so that a
 * crash between them leaves nothing visible or something the next step repairs
 * (organizations.ts).
 */
import { fileURLToPath } from 'node:url';
import type { Client } from './connection.js';
import { readScriptDirectory, type ScriptSource } from './script-files.js';

export type Script = (keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/** Every script the store runs: exactly the files of scripts/ (loadScripts checks it). */
export const SCRIPT_NAMES = [
  'createOrganization',
  'releaseEmail',
  'deleteOrganization',
  'createApiKey',
  'deleteApiKeyIfOwned',
  'changeApiKey',
  'rollApiKey',
  'pruneExpiredApiKeys',
  'recordApiKeyUse',
  'createSession',
  'setKeyLimit',
  'deleteSession',
  'deleteAllSessions',
  'appendAuditEvents',
  'setRateLimit',
  'setOrganizationPlan',
  'setKeyQuota',
  'dropRateLimits',
  'leaseRateBudget',
  'countAttempt',
  'settleAttempt',
  'readCounters',
  'replacePassword',
  'createPasswordReset',
  'consumePasswordReset',
  'claimEmail',
  'changeOrganizationProfile',
  'beginTotp',
  'activateTotp',
  'useTotpStep',
  'useRecoveryCode',
  'replaceRecoveryCodes',
  'removeTotp',
  'createMfaChallenge',
  'failMfaChallenge',
  'addPasskey',
  'renamePasskey',
  'removePasskey',
  'usePasskey',
  'removeSecondFactors',
  'recordUsage',
  'readUsage',
  'leaseQuota',
  'returnQuota',
  'createMember',
  'changeMember',
  'takeInvitation',
  'setMemberPassword',
  'createMemberPasswordReset',
  'consumeMemberPasswordReset',
] as const;

export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** scripts/ next to this module: src/store/redis/scripts in the tree, dist/store/redis/scripts built. */
export const SCRIPTS_DIRECTORY = fileURLToPath(new URL('./scripts/', import.meta.url));

let loaded: Record<ScriptName, ScriptSource> | undefined;

/**
 * The scripts, read from their files once (the first Redis store opened reads them). A missing
 * or unexpected file fails here, at start, not at the first call of its method.
 */
export function loadScripts(): Record<ScriptName, ScriptSource> {
  if (loaded !== undefined) return loaded;
  const found = readScriptDirectory(SCRIPTS_DIRECTORY);
  const missing = SCRIPT_NAMES.filter((name) => !found.has(name));
  const unknown = [...found.keys()].filter((name) => !(SCRIPT_NAMES as readonly string[]).includes(name));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`the Redis scripts in ${SCRIPTS_DIRECTORY} are not the store's: missing ${missing.join(', ') || 'none'}, unknown ${unknown.join(', ') || 'none'}`);
  }
  loaded = Object.fromEntries(SCRIPT_NAMES.map((name) => [name, found.get(name)!])) as Record<ScriptName, ScriptSource>;
  return loaded;
}

/** Defines every script on the client (EVALSHA, with EVAL when the server lost it). */
export function defineScripts(client: Client): Record<ScriptName, Script> {
  const sources = loadScripts();
  return Object.fromEntries(
    SCRIPT_NAMES.map((name) => [name, defineScript(client, sources[name])]),
  ) as Record<ScriptName, Script>;
}

function defineScript(client: Client, source: ScriptSource): Script {
  const { name } = source;
  const fixed = source.keys !== 'any';
  client.defineCommand(name, fixed ? { lua: source.lua, numberOfKeys: source.keys as number } : { lua: source.lua });
  const method: unknown = Reflect.get(client, name);
  if (typeof method !== 'function') throw new Error(`ioredis did not define ${name}`);
  // Without a fixed numberOfKeys, ioredis takes the count as the first argument.
  return async (keys, args) =>
    (await (fixed ? method.call(client, ...keys, ...args) : method.call(client, keys.length, ...keys, ...args))) as unknown;
}
