/**
 * Issue 49's bench rows: an identity provider of the bench's own, so a provider token's warm cost
 * can be measured without any network. It is no OpenID provider (a real one, such as the tests'
 * oidc-provider, would only add a process to the servers' core): a JWKS served on loopback by the
 * bench's own process (on the generator's core; the gateway fetches it at start and every
 * refreshSeconds, nothing per request), with one RS256 and one ES256 key, and access tokens minted
 * locally with jose, shaped as a provider's (RFC 9068: `typ: at+jwt`, `iss`, `aud`, `sub`, `exp`,
 * scopes, and the organization's external id in a claim).
 */
import { createServer, type Server } from 'node:http';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { send, sendJson } from './lib/http.js';
import { routesFile, routesFileUnsupported } from './routes-file.js';

/** The routes file's name for the bench's issuer (`issuer:bench` on every route). */
export const BENCH_ISSUER_NAME = 'bench';
/** The organization's external id at the bench's issuer (set with the admin API before load). */
export const BENCH_EXTERNAL_ID = 'bench-org';
const AUDIENCE = 'https://api.bench.authgate.test';
/** Long enough for any run: a warm token is one verified once and kept until its exp. */
const TOKEN_LIFETIME_S = 24 * 3600;

export type ProviderAlgorithm = 'RS256' | 'ES256';

export type BenchIssuer = {
  /** The routes file of today's two routes, each also taking `issuer:bench`. */
  routesFile: string;
  /** An access token of the bench's issuer, signed with that algorithm's key. */
  mint(alg: ProviderAlgorithm, subject: string): Promise<string>;
  close(): Promise<void>;
};

/** Why the build at `main` has no trusted issuers (issue 49), or undefined when it has. */
export function issuersUnsupported(main: string): string | undefined {
  return routesFileUnsupported(main) ?? (existsSync(join(dirname(main), 'issuers', 'registry.js')) ? undefined : 'this build has no trusted issuers (issue 49)');
}

export async function startBenchIssuer(): Promise<BenchIssuer> {
  const keys = new Map<ProviderAlgorithm, { kid: string; privateKey: CryptoKey }>();
  const jwks: object[] = [];
  for (const alg of ['RS256', 'ES256'] as const) {
    const pair = await generateKeyPair(alg);
    const kid = `bench-${alg.toLowerCase()}`;
    keys.set(alg, { kid, privateKey: pair.privateKey });
    jwks.push({ ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' });
  }
  const body = JSON.stringify({ keys: jwks });
  const server: Server = createServer((request, response) => {
    if (request.url !== '/jwks') {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref(); // the bench's end (process.exit after stopping its children) is its end too
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the bench issuer has no port');
  const issuer = `http://127.0.0.1:${address.port}`;
  const block = [
    'issuers:',
    `  ${BENCH_ISSUER_NAME}:`,
    `    issuer: ${issuer}`,
    `    jwksUri: ${issuer}/jwks`,
    `    audiences: [${AUDIENCE}]`,
    '    algorithms: [RS256, ES256]',
    '    organization: { claim: org_id }',
    '    requireType: at+jwt',
  ];
  return {
    routesFile: routesFile(2, false, { block, credential: `issuer:${BENCH_ISSUER_NAME}` }),
    async mint(alg, subject) {
      const { kid, privateKey } = keys.get(alg)!;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ org_id: BENCH_EXTERNAL_ID, scope: 'accounts:read accounts:write organization:read' })
        .setProtectedHeader({ alg, kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setAudience(AUDIENCE)
        .setSubject(subject)
        .setIssuedAt(now)
        .setExpirationTime(now + TOKEN_LIFETIME_S)
        .sign(privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * The bench organization's provider tokens on the gateway that trusts the bench's issuer: its
 * external id set through that gateway's admin API (an issuer the file does not declare is
 * refused), then each token tried until it is taken, since the gateway fetches the issuer's keys
 * in the background after it is ready (503 until they arrive). Bounded: 30 s.
 */
export async function providerTokens(issuer: BenchIssuer, gateway: { publicUrl: string; opsUrl: string }, adminToken: string, organizationId: string): Promise<{ providerRs256: string; providerEs256: string }> {
  await sendJson(`${gateway.opsUrl}/admin/organizations/${organizationId}`, { method: 'PATCH', headers: { authorization: `Bearer ${adminToken}` }, body: { externalIds: { [BENCH_ISSUER_NAME]: BENCH_EXTERNAL_ID } }, expect: 200 });
  const tokens = { providerRs256: await issuer.mint('RS256', 'bench-rs256'), providerEs256: await issuer.mint('ES256', 'bench-es256') };
  for (const token of Object.values(tokens)) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await send(`${gateway.publicUrl}/accounts`, { headers: { authorization: `Bearer ${token}` } });
      if (answer.status === 200) break;
      if (answer.status !== 503 || Date.now() > deadline) throw new Error(`the bench issuer's token was not taken: GET /accounts answered ${answer.status}: ${answer.body.slice(0, 200)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return tokens;
}
