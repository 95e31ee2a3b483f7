/**
 * Heap per cached credential, in-process: the credential cache module from dist/ (the build the
 * gateway runs) filled with 100 000 principals, each with strings of its own as a Redis reply
 * would give them, measured after gc. Run with --expose-gc; prints one JSON line.
 */
import { ALL_SCOPES_GRANT } from '../src/authz/scopes.js';
import { createHash, randomBytes } from 'node:crypto';
import type * as Cache from '../src/credentials/cache.js';

const COUNT = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const cacheModule: typeof Cache = await import(new URL('../../dist/credentials/cache.js', import.meta.url).href);
const settings = { max: COUNT, ttlSeconds: 60, negativeTtlSeconds: 5 };

function settle(): NodeJS.MemoryUsage {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage();
}

/** Fresh strings, as ioredis hands them out (not interned constants). */
const fresh = (text: string) => Buffer.from(text).toString('utf8');
const hex = () => randomBytes(16).toString('hex');

async function measure(kind: 'api_key' | 'jwt'): Promise<{ heapBytesPerCredential: number; rssBytesPerCredential: number; heapUsedMiB: number; rssMiB: number; entries: number }> {
  const before = settle();
  const cache = cacheModule.createCredentialCache(settings);
  for (let i = 0; i < COUNT; i++) {
    if (kind === 'api_key') {
      const hash = createHash('sha256').update(`agk_live_${hex()}`).digest('hex');
      const principal = { orgId: fresh(`org_${hex()}`), via: 'api_key' as const, credentialId: fresh(`key_${hex()}`), scopes: ALL_SCOPES_GRANT };
      await cache.principal(cacheModule.apiKeyCacheKey(hash), async () => ({ principal }));
    } else {
      const digest = createHash('sha256').update(`eyJ${hex()}${hex()}`).digest('base64url');
      const sessionId = fresh(randomBytes(18).toString('base64url'));
      cache.rememberVerifiedToken(digest, { sessionId, expiresAtMs: Date.now() + 3_600_000 }, 3_600_000);
      const principal = { orgId: fresh(`org_${hex()}`), via: 'jwt' as const, credentialId: fresh(sessionId), scopes: ALL_SCOPES_GRANT };
      await cache.principal(cacheModule.sessionCacheKey(sessionId), async () => ({ principal, ttlMs: 3_600_000 }));
    }
  }
  const after = settle();
  const entries = cache.size(); // after the measurement, so the cache is alive during it
  if (entries !== COUNT) throw new Error(`expected ${COUNT} cached, found ${entries}`);
  const result = {
    heapBytesPerCredential: (after.heapUsed - before.heapUsed) / COUNT,
    rssBytesPerCredential: (after.rss - before.rss) / COUNT,
    heapUsedMiB: after.heapUsed / 2 ** 20,
    rssMiB: after.rss / 2 ** 20,
    entries,
  };
  return result;
}

const apiKey = await measure('api_key');
const jwt = await measure('jwt');
process.stdout.write(`${JSON.stringify({ count: COUNT, apiKey, jwt })}\n`);
