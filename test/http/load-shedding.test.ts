import t from 'tap';
import { eventually, startGateway } from '../helpers/gateway.js';

function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

t.test('a saturated event loop sheds load with 503 and Retry-After, then recovers', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_SHED_EVENT_LOOP_DELAY_MS: '100' } });
  t.equal((await gw.get('/accounts')).status, 401, 'normal answer first');
  const blocker = setInterval(() => busyWait(300), 320);
  let shed: Awaited<ReturnType<typeof gw.get>> | undefined;
  const sawShedding = await eventually(async () => {
    const res = await gw.get('/accounts');
    if (res.status === 503) shed = res;
    return res.status === 503;
  }, 10_000, 50);
  clearInterval(blocker);
  t.ok(sawShedding, 'requests are refused while the loop is saturated');
  t.equal(shed?.json().code, 1509);
  t.ok(Number(shed?.headers['retry-after']) >= 1, 'with Retry-After');
  t.ok(await eventually(async () => (await gw.get('/accounts')).status === 401, 10_000, 100), 'and served again once it recovers');
  t.equal(gw.upstream.requests.length, 0);
});

t.test('shedding off: no hook at all', async (t) => {
  const gw = await startGateway(t, { env: { AUTHGATE_SHED_EVENT_LOOP_DELAY_MS: '0' } });
  t.notOk(gw.gateway.publicServer.hasPlugin('@fastify/under-pressure'));
  t.equal((await gw.get('/accounts')).status, 401);
});
