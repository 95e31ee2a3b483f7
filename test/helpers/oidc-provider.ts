/**
 * A real OpenID provider on loopback for the provider-token tests (issue 49): panva's
 * oidc-provider, issuing RFC 9068 JWT access tokens (`typ: at+jwt`) through client credentials
 * and resource indicators, or opaque ones it answers RFC 7662 introspection for. Its keys are made here, so a test can also sign a token the provider
 * would never issue (wrong claims, HS256 with its public key) with its real private key. The HTTP
 * server stays on its port across stop()/start() (the provider down, then back) and rotate()
 * (a new provider with a new key behind the same issuer).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

export type TestProvider = {
  issuer: string;
  /** The private signing key (JWK with kid and alg) the provider signs with now. */
  key: JWK & { kid: string };
  /** A client-credentials access token for `resource`, whose org claim is `org`. */
  token(input: { org: string; resource: string; scope?: string }): Promise<string>;
  /** A new signing key (new kid): what the provider signs with from now on, and all its JWKS holds. */
  rotate(): Promise<void>;
  /** Stops answering (the port is closed), then answers again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Requests the JWKS endpoint answered. */
  jwksServed(): number;
  /** Requests the introspection endpoint answered (options.introspection). */
  introspectionsServed(): number;
  /** Revokes a token at the provider (RFC 7009), as the client it was issued to. */
  revoke(token: string, org: string): Promise<void>;
  close(): Promise<void>;
};

const SCOPES = 'orders:read orders:write openid';

async function newKey(alg: 'RS256' | 'ES256'): Promise<JWK & { kid: string }> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `k-${Math.random().toString(36).slice(2, 10)}`, alg, use: 'sig' };
}

export const INTROSPECTION_PATH = '/token/introspection';

/**
 * `introspection`: access tokens are opaque, and the provider answers RFC 7662 introspection
 * (and RFC 7009 revocation) to this client, which client_secret_basic authenticates.
 */
export async function startTestProvider(options: { alg?: 'RS256' | 'ES256'; orgClaim?: string; introspection?: { clientId: string; clientSecret: string } } = {}): Promise<TestProvider> {
  const alg = options.alg ?? 'RS256';
  const orgClaim = options.orgClaim ?? 'org_id';
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(503).end();
  let served = 0;
  let introspections = 0;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/jwks')) served++;
    if (req.url === INTROSPECTION_PATH) introspections++;
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  /** client id → the org claim its tokens carry. */
  const orgs = new Map<string, string>();
  let key = await newKey(alg);
  const introspector = options.introspection;

  function build(): void {
    const provider = new Provider(issuer, {
      clients: [
        ...[...orgs.keys()].map((clientId) => ({ client_id: clientId, client_secret: `${clientId}-secret`, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], scope: SCOPES, id_token_signed_response_alg: alg })),
        ...(introspector === undefined ? [] : [{ client_id: introspector.clientId, client_secret: introspector.clientSecret, grant_types: [], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic' }]),
      ],
      jwks: { keys: [key] },
      scopes: SCOPES.split(' '),
      ttl: { ClientCredentials: 300 },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        introspection: { enabled: introspector !== undefined },
        revocation: { enabled: introspector !== undefined },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, resource: string) =>
            introspector === undefined
              ? { scope: 'orders:read orders:write', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg } } }
              : { scope: 'orders:read orders:write', audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: 300 },
        },
      },
      extraTokenClaims: (_ctx: unknown, token: { clientId?: string }) => ({ [orgClaim]: orgs.get(token.clientId ?? '') }),
    });
    const callback = provider.callback();
    handler = (req, res) => void callback(req, res);
  }
  build();

  return {
    issuer,
    get key() {
      return key;
    },
    async token({ org, resource, scope = 'orders:read' }) {
      const clientId = `c-${org}`;
      if (!orgs.has(clientId)) {
        orgs.set(clientId, org);
        build();
      }
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || body.access_token === undefined) throw new Error(`token: ${res.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async rotate() {
      key = await newKey(alg);
      build();
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    async start() {
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    },
    jwksServed: () => served,
    introspectionsServed: () => introspections,
    async revoke(token, org) {
      const clientId = `c-${org}`;
      const res = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret`).toString('base64')}` },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
      });
      if (res.status !== 200) throw new Error(`revoke: ${res.status} ${await res.text()}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
