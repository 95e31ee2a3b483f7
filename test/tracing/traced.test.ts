// traced() (tracing/tracing.ts): a dependency whose named async methods run in a child span of
// the request's span. The wrapper must behave as the target itself (its `this`, private fields,
// accessors and fields), and the named methods must be spans under a real request's span,
// exported to a real OTLP receiver; a real node:http server on loopback serves the request.
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { createTracing } from '../../src/tracing/sdk.js';
import { traced } from '../../src/tracing/tracing.js';
import { eventually } from '../helpers/gateway.js';
import { SPAN_KIND, startOtlpReceiver } from '../helpers/otlp-receiver.js';

class Store {
  #reads = 0;
  limit = 3;
  get reads(): number {
    return this.#reads;
  }
  async find(id: string): Promise<string> {
    this.#reads += 1;
    return `found ${id} (${this.#reads}/${this.limit})`;
  }
  plain(): string {
    return `plain ${this.#reads}`;
  }
}

t.test('tracing off: the target itself', async (t) => {
  const store = new Store();
  t.equal(traced(store, undefined, { find: 'store.find' }), store);
});

t.test('tracing on: the named method is a child span of the request, the rest behaves as the target', async (t) => {
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  // The exporter reads the standard OTEL_* names from the environment, as in production.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
  const tracing = createTracing({ recordOrgId: false, serviceVersion: 'test', onDropped: () => undefined });
  t.teardown(() => tracing.shutdown());
  const store = new Store();
  const wrapped = traced(store, tracing, { find: 'store.find' });

  // Private fields and `this`: every method runs on the target.
  t.equal(wrapped.plain(), 'plain 0');
  // A field reads and writes through to the target; an accessor reads the target's state.
  wrapped.limit = 5;
  t.equal(store.limit, 5);
  t.equal(wrapped.limit, 5);

  const server = createServer(
    tracing.serve((request, response) => {
      void wrapped.find('k1').then((found) => {
        tracing.finish(request, { route: '/things', status: 200, credentialKind: undefined, reason: undefined, orgId: undefined });
        response.end(found);
      });
    }, 'http'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const body = await new Promise<string>((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path: '/things', agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text));
    }).on('error', reject).end();
  });
  t.equal(body, 'found k1 (1/5)');
  t.equal(wrapped.reads, 1, 'the accessor reads the target');
  t.equal(store.reads, 1);

  t.ok(await eventually(async () => receiver.spans.some((s) => s.name === 'store.find'), 10_000), 'the child span is exported');
  const child = receiver.spans.find((s) => s.name === 'store.find')!;
  const parent = receiver.spans.find((s) => s.kind === SPAN_KIND.server);
  t.ok(parent, 'the server span is exported');
  t.equal(child.kind, SPAN_KIND.internal);
  t.equal(child.traceId, parent!.traceId);
  t.equal(child.parentSpanId, parent!.spanId);

  // Outside a request: the method runs, no span.
  const before = receiver.spans.length;
  t.equal(await wrapped.find('k2'), 'found k2 (2/5)');
  t.equal(wrapped.plain(), 'plain 2');
  await tracing.shutdown();
  t.equal(receiver.spans.filter((s) => s.name === 'store.find').length, 1, 'no span outside a request');
  t.ok(receiver.spans.length >= before);
});
