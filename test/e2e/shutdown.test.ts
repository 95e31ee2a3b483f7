import { createServer } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import t from 'tap';
import { UA, eventually, send } from '../helpers/gateway.js';
import { createOrganizationAndLogin, startGatewayProcess } from '../helpers/gateway-process.js';
import { identityKeyFile } from '../helpers/identity-key.js';
import { parseResponse } from '../helpers/raw-http.js';
import { startRecordingUpstream } from '../helpers/upstream.js';

t.test('SIGTERM: readiness fails at once, in-flight requests finish, then exit 0', async (t) => {
  const upstream = await startRecordingUpstream();
  t.teardown(() => upstream.close());
  const gw = await startGatewayProcess({
    NODE_ENV: 'production',
    AUTHGATE_IDENTITY_KEY_FILE: identityKeyFile(),
    AUTHGATE_STORE: 'memory',
    AUTHGATE_TLS: 'offloaded',
    AUTHGATE_UPSTREAM_URL: upstream.url,
    // The window in which a stopping gateway still takes new requests: the readiness poll and the
    // request that checks the window must both fit in it. 10 s leaves a loaded machine time for
    // both (a 3 s window once closed before them under a full parallel test run).
    AUTHGATE_SHUTDOWN_DELAY_SECONDS: '10',
    AUTHGATE_SHUTDOWN_GRACE_SECONDS: '10',
  });
  t.teardown(() => {
    if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
  });

  const { orgStatus, loginStatus, token } = await createOrganizationAndLogin(gw, { name: 'Slow', email: 'slow@example.test' });
  t.equal(orgStatus, 201);
  t.equal(loginStatus, 200, 'logged in');

  // Answers are held at the upstream until the listeners have closed, however slow the machine:
  // these five are in flight through the whole shutdown.
  const release = upstream.holdAnswers();
  const forward = () => send(`${gw.publicUrl}/accounts`, { headers: { ...UA, authorization: `Bearer ${token}` } });
  const inFlight = Array.from({ length: 5 }, forward);
  t.ok(await eventually(async () => upstream.requests.length === 5, 20_000, 20), 'five requests are at the upstream');

  gw.child.kill('SIGTERM');
  t.ok(await eventually(async () => (await send(`${gw.opsUrl}/readyz`)).status === 503, 10_000, 20), 'readiness fails at once');
  t.equal((await send(`${gw.opsUrl}/livez`)).status, 200, 'but it is alive');
  // The listeners stay open for the shutdown delay: a request now (shutdown has begun: readiness
  // failed) is still taken and forwarded.
  const duringDelay = forward();
  t.ok(await eventually(async () => upstream.requests.length === 6, 20_000, 20), 'new requests are still served while load balancers notice');
  // Then the listeners close: a new connection is refused while those six are still held.
  const refused = await eventually(() => send(`${gw.publicUrl}/accounts`, { headers: UA }).then(() => false, () => true), 30_000, 50);
  t.ok(refused, 'new connections are refused once the delay is over');
  release();

  const results = await Promise.all([...inFlight, duringDelay]);
  t.same(results.map((r) => r.status), [200, 200, 200, 200, 200, 200], 'every in-flight request finished');
  const exit = await gw.exited;
  t.same(exit, { code: 0, signal: null }, 'exit code 0');
  t.match(gw.output(), /"event":"stopped"/);
});

t.test('once closing, a request on a kept-alive connection gets a 503 problem with Retry-After', async (t) => {
  // An upstream that holds every request until the test lets it answer.
  let arrived = 0;
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = createServer((request, response) => {
    arrived++;
    request.resume();
    void released.then(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    release();
    held.closeAllConnections();
    held.close();
  });
  const gw = await startGatewayProcess({
    AUTHGATE_STORE: 'memory',
    AUTHGATE_UPSTREAM_URL: `http://127.0.0.1:${(held.address() as AddressInfo).port}`,
    AUTHGATE_SHUTDOWN_DELAY_SECONDS: '0',
    AUTHGATE_SHUTDOWN_GRACE_SECONDS: '30',
  });
  t.teardown(() => {
    if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
  });
  const { loginStatus, token } = await createOrganizationAndLogin(gw, { name: 'Kept', email: 'kept@example.test' });
  t.equal(loginStatus, 200);
  const port = Number(new URL(gw.publicUrl).port);
  const request = `GET /accounts HTTP/1.1\r\nHost: gateway.test\r\nUser-Agent: t\r\nAuthorization: Bearer ${token}\r\n\r\n`;

  // One kept-alive connection, busy with a request the upstream holds: close() leaves it open.
  let raw = '';
  const socket = net.connect(port, '127.0.0.1');
  socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(request);
  t.ok(await eventually(async () => arrived === 1, 10_000), 'the first request is at the upstream');

  gw.child.kill('SIGTERM');
  const listenerClosed = await eventually(
    () =>
      new Promise<boolean>((resolve) => {
        const probe = net.connect(port, '127.0.0.1');
        probe.on('connect', () => {
          probe.destroy();
          resolve(false);
        });
        probe.on('error', () => resolve(true));
      }),
    15_000,
    20,
  );
  t.ok(listenerClosed, 'the listener is closed: close() has begun');
  t.equal(raw, '', 'the first request is still in flight');
  socket.write(request);
  release();
  await closed;

  const [first, second] = raw.split(/(?=HTTP\/1\.1 )/).map(parseResponse);
  t.equal(first?.status, 200, 'the request in flight is answered');
  t.equal(second?.status, 503, 'the one after it is refused');
  t.match(second?.headers['content-type'], /^application\/problem\+json/);
  t.equal(JSON.parse(second?.body ?? '{}').code, 1510, 'code 1510: shutting down');
  t.equal(second?.headers['retry-after'], '1');
  t.equal(second?.headers['connection'], 'close');
  t.match(second?.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  t.equal(arrived, 1, 'the refused request never reached the upstream');
  t.same(await gw.exited, { code: 0, signal: null });
});

t.test('a bad production configuration stops the start with one line per setting and exit 1', async (t) => {
  const gw = await startGatewayProcess(
    { NODE_ENV: 'production', AUTHGATE_JWT_SECRET: 'too-short', AUTHGATE_ADMIN_TOKEN: '', AUTHGATE_ENVIRONMENT: 'staging' },
    { waitReady: false },
  );
  const exit = await gw.exited;
  t.equal(exit.code, 1);
  const lines = gw.output().trim().split('\n');
  t.ok(lines.some((l) => /^authgate: AUTHGATE_JWT_SECRET must be at least 32 bytes$/.test(l)), 'weak secret');
  t.ok(lines.some((l) => /AUTHGATE_ADMIN_TOKEN is required/.test(l)), 'missing admin token');
  t.ok(lines.some((l) => /AUTHGATE_UPSTREAM_URL is required/.test(l)), 'missing upstream');
  t.ok(lines.some((l) => /AUTHGATE_STORE/.test(l)), 'no Redis and no AUTHGATE_STORE=memory');
  t.ok(lines.some((l) => /AUTHGATE_ENVIRONMENT must be production or sandbox/.test(l)), 'mistyped environment');
  t.ok(lines.some((l) => /^authgate: AUTHGATE_IDENTITY_KEY_FILE is required in production/.test(l)), 'no identity signing key');
  t.notOk(gw.output().includes('too-short'), 'the value of a secret is never printed');
});

t.test('development start with nothing set: generated secrets, example upstream, admin token printed once', async (t) => {
  const gw = await startGatewayProcess({ AUTHGATE_JWT_SECRET: '', AUTHGATE_ADMIN_TOKEN: '', AUTHGATE_JWT_TTL_SECONDS: 'misspelt-value-never-logged' });
  t.teardown(() => {
    gw.child.kill('SIGKILL');
  });
  t.match(gw.output(), /"event":"unknown_setting","name":"AUTHGATE_JWT_TTL_SECONDS"/, 'a misspelt setting is named at start');
  t.notOk(gw.output().includes('misspelt-value-never-logged'), 'but never its value');
  const match = /development admin token[^\n]*\n\s+(\S+)/.exec(gw.output());
  t.ok(match, 'the generated admin token is printed');
  const adminToken = match![1]!;
  t.equal(gw.output().split(adminToken).length - 1, 1, 'exactly once');
  const { orgId, orgStatus, token } = await createOrganizationAndLogin(gw, { name: 'Dev', email: 'dev@example.test', adminToken });
  t.equal(orgStatus, 201);
  const accounts = await send(`${gw.publicUrl}/accounts`, { headers: { ...UA, authorization: `Bearer ${token}` } });
  t.equal(accounts.status, 200, 'the bundled example upstream answers');
  t.equal(accounts.json().accounts[0].organizationId, orgId);
});
