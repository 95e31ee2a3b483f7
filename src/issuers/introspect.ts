/**
 * One issuer's RFC 7662 introspection endpoint, asked about opaque access tokens (issue 49).
 * The rules:
 * - a POST of `token=…&token_type_hint=access_token`, form-encoded, as the configured client
 *   (client_secret_basic, RFC 6749 §2.3.1), over a pool of at most MAX_CONNECTIONS keep-alive
 *   connections, each call bounded by `timeoutSeconds` (the wait for a connection included);
 * - one call in flight per token: parallel requests with one token wait on the same call;
 * - at most MAX_IN_FLIGHT calls at once: beyond that, and whenever the endpoint cannot answer
 *   (refused, a timeout, a status other than 200, a body that is no JSON object with a boolean
 *   `active`), the token is refused with 503 and Retry-After (IntrospectionUnavailable): fail
 *   closed, never a 200 and never a 401 for a token that could not be checked;
 * - `active: false` (and an active answer whose claims are refused) is kept for
 *   `inactiveCacheSeconds`, bounded in entries, and only ever refuses;
 *   `active: true` is checked like a JWT's claims (introspect-claims.ts) and its reuse is the
 *   caller's (credentials/issuer-tokens.ts), until `reuseUntilMs`: the earlier of the token's
 *   `exp` and `cacheSeconds` from now, so a token revoked at the provider is refused at most
 *   `cacheSeconds` later.
 * Tokens are keyed by their digest (the caller's sha256), never by themselves.
 */
import { LRUCache } from 'lru-cache';
import { Pool } from 'undici';
import { growingLru } from '../credentials/growing-lru.js';
import { checkIntrospected } from './introspect-claims.js';
import type { CompiledIssuer } from './types.js';
import type { RefusedIssuerToken, VerifiedIssuerToken } from './verify.js';

export const INTROSPECTION_RESULTS = ['active', 'inactive', 'error', 'timeout', 'invalid'] as const;
export type IntrospectionResult = (typeof INTROSPECTION_RESULTS)[number];

/** The endpoint could not say: 503 with Retry-After. */
export class IntrospectionUnavailable extends Error {
  readonly retryAfterSeconds = 1;
  constructor() {
    super('introspection unavailable');
    this.name = 'IntrospectionUnavailable';
  }
}

export type IntrospectedToken = VerifiedIssuerToken & Readonly<{ reuseUntilMs: number }>;

export type Introspector = Readonly<{
  /** The token's standing now; rejects with IntrospectionUnavailable when the endpoint cannot say. */
  introspect(token: string, digest: string): Promise<IntrospectedToken | RefusedIssuerToken>;
  close(): void;
}>;

export type IntrospectorDeps = Readonly<{ now: () => number; onCall: (result: IntrospectionResult) => void }>;

const MAX_CONNECTIONS = 16;
const MAX_IN_FLIGHT = 256;
const MAX_INACTIVE_ENTRIES = 10_000;
/** An introspection answer is a handful of claims; anything this large is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;
const INACTIVE: RefusedIssuerToken = Object.freeze({ ok: false, reason: 'inactive' });

export function createIntrospector(issuer: CompiledIssuer, deps: IntrospectorDeps): Introspector {
  const spec = issuer.introspection!;
  const url = new URL(spec.url);
  const timeoutMs = spec.timeoutSeconds * 1000;
  const pool = new Pool(url.origin, { connections: MAX_CONNECTIONS, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, connect: { timeout: timeoutMs } });
  const form = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  const authorization = `Basic ${Buffer.from(`${form(spec.clientId)}:${form(spec.clientSecret.reveal())}`).toString('base64')}`;
  /** digest → the refusal of an `active: false` answer (or of an active one's claims), kept briefly. */
  const refusals = new LRUCache<string, RefusedIssuerToken>({ ...growingLru(MAX_INACTIVE_ENTRIES), ttl: spec.inactiveCacheSeconds * 1000, ttlResolution: 0 });
  const inFlight = new Map<string, Promise<IntrospectedToken | RefusedIssuerToken>>();

  /** The endpoint's answer as an object with a boolean `active`, or the result that says why not. */
  async function call(token: string): Promise<Readonly<Record<string, unknown>> | IntrospectionResult> {
    try {
      const response = await pool.request({
        path: url.pathname + url.search,
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'cache-control': 'no-store' },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.statusCode !== 200) {
        response.body.resume(); // drained, so the connection is kept
        return 'error';
      }
      const text = await readBounded(response.body);
      if (text === undefined) return 'invalid';
      const answer: unknown = JSON.parse(text);
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer) || typeof (answer as { active?: unknown }).active !== 'boolean') return 'invalid';
      return answer as Record<string, unknown>;
    } catch (error) {
      if (error instanceof SyntaxError) return 'invalid';
      return isTimeout(error) ? 'timeout' : 'error';
    }
  }

  async function settle(token: string, digest: string): Promise<IntrospectedToken | RefusedIssuerToken> {
    const answer = await call(token);
    if (typeof answer === 'string') {
      deps.onCall(answer);
      throw new IntrospectionUnavailable();
    }
    if (answer.active !== true) {
      deps.onCall('inactive');
      refusals.set(digest, INACTIVE);
      return INACTIVE;
    }
    deps.onCall('active');
    const now = deps.now();
    const checked = checkIntrospected(answer, issuer, now);
    if (!checked.ok) {
      refusals.set(digest, checked); // the same answer again would be refused the same way
      return checked;
    }
    return { ...checked, reuseUntilMs: Math.min(checked.expiresAtMs, now + spec.cacheSeconds * 1000) };
  }

  return {
    introspect(token, digest) {
      const refused = refusals.get(digest);
      if (refused !== undefined) return Promise.resolve(refused);
      const pending = inFlight.get(digest);
      if (pending !== undefined) return pending;
      if (inFlight.size >= MAX_IN_FLIGHT) return Promise.reject(new IntrospectionUnavailable());
      const started = settle(token, digest).finally(() => inFlight.delete(digest));
      inFlight.set(digest, started);
      return started;
    },
    close() {
      void pool.close().catch(() => {});
    },
  };
}

/** The body as text, or undefined when it is larger than an answer can be. */
async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isTimeout(error: unknown): boolean {
  const { name, code } = (error ?? {}) as { name?: string; code?: string };
  return name === 'TimeoutError' || name === 'AbortError' || (typeof code === 'string' && code.includes('TIMEOUT'));
}
