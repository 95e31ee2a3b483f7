/**
 * Issue 18's references beside authgate: nginx auth_request to a node:http key service (what
 * users build by hand instead), and the smallest Node gateway with the fast lane's pieces
 * (bench/node-gateway.ts), warm and reading Redis per request. Each is started only when its
 * scenario runs; each refuses what authgate refuses before any load.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { send } from '../lib/http.js';
import { findNginx, startBenchNginx, type AuthService } from '../lib/nginx.js';
import { firstMessage, hasTaskset, startProcess, waitFor } from '../lib/proc.js';
import type { BenchRedis } from '../lib/redis.js';
import { benchFile, keepTemporary, SERVER_CORE, UA } from './processes.js';

/** A started server: where it listens and the pid its CPU time is read from. */
export type Server = { url: string; pid: number };

/** Issue 30's rows with nginx in front of an authgate authz listener, each a front of the one nginx. */
export const AUTHZ_REFERENCES = ['nginx-authz', 'nginx-authz-noident', 'nginx-authz-compare'] as const;
export type AuthzReference = (typeof AUTHZ_REFERENCES)[number];

export type References = {
  servers: Map<'nginx' | AuthzReference | 'node-gateway' | 'node-gateway-cold', Server>;
  /** More processes to watch (the key service behind nginx), by name. */
  watch: Map<string, number>;
  nginxVersion: string | undefined;
  /** nginx-auth was asked for, but no nginx with auth_request is on the PATH. */
  nginxSkipped: boolean;
};

export type ReferenceSetup = {
  wanted(id: 'nginx-auth' | 'nginx-authz' | 'nginx-authz-jwt' | 'node-gateway' | 'node-gateway-cold'): boolean;
  upstreamPort: number;
  redis: BenchRedis;
  apiKey: string;
  organizationId: string;
  headersWith(credential: string): Record<string, string>;
  log(text: string): void;
  /** authgate's authz listeners (issue 30) whose scenarios were selected and whose build has one: the port's, without the assertion, --compare's. */
  authz: readonly { name: AuthzReference; port: number; pid: number }[];
};

export async function startReferences(setup: ReferenceSetup): Promise<References> {
  const { wanted, apiKey, headersWith, log } = setup;
  const servers: References['servers'] = new Map();
  const watch = new Map<string, number>();
  // Both know only the digest of the bench's API key, never the key.
  const digest = createHash('sha256').update(apiKey).digest('base64url');
  const childEnv = (env: Record<string, string> = {}) => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', NODE_ENV: 'production', BENCH_KEY_DIGESTS: JSON.stringify([[digest, setup.organizationId]]), ...env });

  // nginx auth_request → a node:http key service that knows this key.
  const nginxFound = wanted('nginx-auth') || setup.authz.length > 0 ? findNginx() : undefined;
  const nginxSkipped = wanted('nginx-auth') && nginxFound === undefined;
  // One nginx for every row that has one (bench/lib/nginx.ts): a front per auth service.
  const fronts: { name: 'nginx' | AuthzReference; authPort: number; service: AuthService }[] = [];
  let keyServicePid: number | undefined;
  if (nginxFound !== undefined && wanted('nginx-auth')) {
    const keyServiceProc = startProcess('keyservice', process.execPath, [benchFile('keyservice.js')], { core: SERVER_CORE, ipc: true, env: childEnv() });
    const { port: keyServicePort } = await firstMessage<{ port: number }>(keyServiceProc);
    keyServicePid = keyServiceProc.pid;
    fronts.push({ name: 'nginx', authPort: keyServicePort, service: 'keyservice' });
  } else if (nginxSkipped) {
    log('nginx (with auth_request) not found on the PATH: the nginx-auth reference row is SKIPPED (Debian: apt-get install nginx-light)');
  }
  // Issue 30: the same nginx with authgate's authz listener deciding. The scenario's CPU per
  // request is authgate's (its pid is the server's); nginx's is watched beside it. A front each for
  // the listener without the assertion and, with --compare, for the other build's.
  if (nginxFound !== undefined) for (const authz of setup.authz) fronts.push({ name: authz.name, authPort: authz.port, service: 'authgate' });
  if (nginxFound !== undefined && fronts.length > 0) {
    const started = await startBenchNginx(nginxFound.binary, setup.upstreamPort, fronts, hasTaskset ? SERVER_CORE : undefined);
    keepTemporary(started.dir);
    const urlOf = (name: string) => `http://127.0.0.1:${started.ports.get(name)!}`;
    const otherKey = headersWith(`${apiKey.slice(0, -1)}${apiKey.endsWith('A') ? 'B' : 'A'}`);
    for (const front of fronts) {
      const url = urlOf(front.name);
      try {
        await waitFor(`nginx (${front.name}) ready`, 10_000, async () => (await send(`${url}/accounts`, { headers: headersWith(apiKey) })).status === 200, started.proc);
      } catch (error) {
        let errorLog = '';
        try {
          errorLog = readFileSync(join(started.dir, 'error.log'), 'utf8').slice(-4000);
        } catch {
          // none written
        }
        throw new Error(`${error instanceof Error ? error.message : String(error)}\nnginx error.log:\n${errorLog}`);
      }
      const unknownKey = await send(`${url}/accounts`, { headers: otherKey });
      if (front.service === 'keyservice') {
        // The key service refuses what authgate refuses, and nginx passes its refusals on.
        const noBearer = await send(`${url}/accounts`, { headers: { 'user-agent': UA } });
        const noUserAgent = await send(`${url}/accounts`, { headers: { 'user-agent': '', authorization: `Bearer ${apiKey}` } });
        if (unknownKey.status !== 401 || noBearer.status !== 401 || noUserAgent.status !== 403) {
          throw new Error(`nginx-auth: refusals answered ${unknownKey.status} (unknown key), ${noBearer.status} (no credential), ${noUserAgent.status} (no User-Agent); expected 401, 401, 403`);
        }
        servers.set('nginx', { url, pid: started.proc.pid });
        log(`nginx ${nginxFound.version}: pid ${started.proc.pid} on ${url}, key service pid ${keyServicePid}`);
      } else {
        if (unknownKey.status !== 401) throw new Error(`${front.name}: an unknown key answered ${unknownKey.status}; expected 401`);
        const authz = setup.authz.find((a) => a.name === front.name)!;
        servers.set(front.name, { url, pid: authz.pid });
        log(`nginx ${nginxFound.version} → authgate authz (${front.name}): pid ${started.proc.pid} on ${url}, authz port ${authz.port}`);
      }
    }
    // One process, watched once: every row's nginx.
    watch.set('nginx', started.proc.pid);
    if (keyServicePid !== undefined) watch.set('keyservice', keyServicePid);
  }

  // The smallest Node gateway with the fast lane's pieces; and the same reading the digest from
  // Redis on every request (cache off's floor).
  const startNodeGateway = async (name: 'node-gateway' | 'node-gateway-cold', env: Record<string, string>) => {
    const proc = startProcess(name, process.execPath, [benchFile('node-gateway.js'), `http://127.0.0.1:${setup.upstreamPort}`], { core: SERVER_CORE, ipc: true, env: childEnv(env) });
    const { port } = await firstMessage<{ port: number }>(proc);
    log(`${name}: pid ${proc.pid} on port ${port}`);
    servers.set(name, { url: `http://127.0.0.1:${port}`, pid: proc.pid });
    watch.set(name, proc.pid);
  };
  if (wanted('node-gateway')) await startNodeGateway('node-gateway', {});
  if (wanted('node-gateway-cold')) {
    const hash = 'bench:node-gateway';
    await setup.redis.client.hset(hash, digest, setup.organizationId);
    await startNodeGateway('node-gateway-cold', { BENCH_REDIS_URL: setup.redis.url, BENCH_REDIS_HASH: hash });
  }
  return { servers, watch, nginxVersion: nginxFound?.version, nginxSkipped };
}
