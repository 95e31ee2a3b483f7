import t, { type Test } from 'tap';
import net from 'node:net';
import type { RoutesFile } from '../../src/route-table/types.js';
import { startAuthzGateway } from '../helpers/authz.js';
import { UA } from '../helpers/gateway.js';

/**
 * A kept allow (decider-outcomes.ts keeps the object; the fast front keeps its header bytes,
 * fast-front.ts): the bytes on the wire are the same, byte for byte (but the Date value), for the
 * first answer and every later one, on every protocol; and never the kept block where the answer
 * must close the connection.
 */

/** A keep-alive connection that sends one request at a time and reads exactly its answer (head and Content-Length body). */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let buffer = '';
  let waiting: ((answer: string) => void) | undefined;
  let ended = false;
  const take = () => {
    const end = buffer.indexOf('\r\n\r\n');
    if (end === -1 || waiting === undefined) return;
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0);
    if (buffer.length < end + 4 + length) return;
    const answer = buffer.slice(0, end + 4 + length);
    buffer = buffer.slice(end + 4 + length);
    const resolve = waiting;
    waiting = undefined;
    resolve(answer);
  };
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    take();
  });
  socket.on('end', () => (ended = true));
  return {
    send(text: string): Promise<string> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer within 5 s; so far: ${JSON.stringify(buffer)}`)), 5000);
        waiting = (answer) => {
          clearTimeout(timer);
          resolve(answer);
        };
        socket.write(text);
        take();
      });
    },
    /** Resolves once the server has ended the connection (bounded). */
    closed(): Promise<boolean> {
      if (ended) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), 5000);
        socket.once('end', () => (clearTimeout(timer), resolve(true)));
      });
    },
    destroy: () => socket.destroy(),
  };
}

/** The answer with its Date value masked: the one part that may differ between two answers. */
const undated = (answer: string) => answer.replace(/\r\nDate: [^\r]+\r\n/, '\r\nDate: <date>\r\n');

const FILE: RoutesFile = {
  version: 1,
  scopes: { 'accounts:read': 'Read accounts', 'accounts:write': 'Change accounts' },
  routes: [{ id: 'accounts', path: '/accounts', match: 'subtree', methods: { GET: 'accounts:read', POST: 'accounts:write' } }],
};

const gatewaySetup = (t: Test, env: Record<string, string> = {}) => startAuthzGateway(t, FILE, env);

const requests = (credential: string): Record<string, string> => ({
  'nginx auth_request': `GET /authz/auth-request HTTP/1.1\r\nHost: authz\r\nX-Original-Method: GET\r\nX-Original-URI: /accounts/7?q=1\r\nX-Forwarded-For: 203.0.113.9\r\nUser-Agent: ${UA['user-agent']}\r\nAuthorization: Bearer ${credential}\r\n\r\n`,
  'Traefik forward-auth': `GET /authz/forward-auth HTTP/1.1\r\nHost: authz\r\nX-Forwarded-Method: GET\r\nX-Forwarded-Uri: /accounts\r\nX-Forwarded-For: 198.51.100.7\r\nAuthorization: Bearer ${credential}\r\n\r\n`,
  'Envoy ext_authz (GET)': `GET /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${credential}\r\nContent-Length: 0\r\n\r\n`,
  'Envoy ext_authz (POST)': `POST /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${credential}\r\nContent-Length: 0\r\n\r\n`,
  'Envoy ext_authz (HEAD)': `HEAD /authz/ext-authz/accounts HTTP/1.1\r\nHost: api.example.test\r\nAuthorization: Bearer ${credential}\r\nContent-Length: 0\r\n\r\n`,
});

t.test('the authorization port: a kept allow answers the same bytes as the first, on every protocol', async (t) => {
  for (const [cacheSeconds, env] of [['no-store', {}], ['max-age', { AUTHGATE_AUTHZ_CACHE_SECONDS: '2' }]] as const) {
    const s = await gatewaySetup(t, env);
    for (const [kind, credential] of [['API key', s.key], ['login token', s.token]] as const) {
      for (const [name, text] of Object.entries(requests(credential))) {
        const c = connection(s.authz.port);
        const first = await c.send(text);
        t.match(first, /^HTTP\/1\.1 200 OK\r\n/, `${name}, ${kind}, ${cacheSeconds}: allowed`);
        t.match(first, /\r\nx-authgate-identity: [\w-]+\.[\w-]+\.[\w-]+\r\n/);
        t.match(first, /\r\nConnection: keep-alive\r\nKeep-Alive: timeout=125\r\n\r\n$/);
        for (let i = 0; i < 3; i++) t.equal(undated(await c.send(text)), undated(first), `${name}, ${kind}, ${cacheSeconds}: answer ${i + 2} byte for byte the first`);
        // Another connection, the same credential: the same bytes.
        const other = connection(s.authz.port);
        t.equal(undated(await other.send(text)), undated(first), `${name}, ${kind}: the same bytes on another connection`);
        // The client closes: node's block with Connection: close, and the connection ends.
        const closing = await other.send(text.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'));
        t.equal(undated(closing), undated(first).replace('Connection: keep-alive\r\nKeep-Alive: timeout=125\r\n', 'Connection: close\r\n'), `${name}, ${kind}: Connection: close, otherwise the same`);
        t.ok(await other.closed(), 'the connection ends after it');
        c.destroy();
        other.destroy();
      }
    }
  }
});

t.test('nginx auth_request with an announced body: Connection: close, never the kept block', async (t) => {
  const s = await gatewaySetup(t);
  const text = requests(s.key)['nginx auth_request']!;
  const c = connection(s.authz.port);
  t.teardown(c.destroy);
  const first = await c.send(text);
  t.match(first, /Connection: keep-alive/);
  const announced = connection(s.authz.port);
  t.teardown(announced.destroy);
  const answer = await announced.send(text.replace('\r\n\r\n', '\r\nContent-Length: 5\r\n\r\n'));
  // The port's own `connection: close` among its headers, node's keep-alive lines gone.
  t.equal(undated(answer), undated(first).replace('content-length: 0\r\n', 'content-length: 0\r\nconnection: close\r\n').replace('Connection: keep-alive\r\nKeep-Alive: timeout=125\r\n', ''));
  t.ok(await announced.closed());
});
