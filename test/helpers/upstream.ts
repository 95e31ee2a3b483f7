import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export type RecordedRequest = Readonly<{ method: string; url: string; headers: IncomingHttpHeaders; rawHeaders: string[]; body: string }>;

export type RecordingUpstream = {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /**
   * Holds every answer from now on until the returned function is called: for tests that need
   * requests in flight for as long as a condition takes, on a machine of any speed.
   */
  holdAnswers(): () => void;
  close(): Promise<void>;
};

/**
 * A real HTTP upstream on loopback that records what reached it and answers with a JSON echo
 * (method, url, organization) and a few headers, so tests can check both directions.
 */
export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  let held: Promise<void> | undefined;
  const upstream: RecordingUpstream = {
    url: '',
    port: 0,
    requests: [],
    holdAnswers() {
      let release!: () => void;
      held = new Promise<void>((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    close: async () => {},
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        rawHeaders: request.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      upstream.requests.push(recorded);
      const answer = () => {
        if (response.destroyed) return;
        response.writeHead(request.url?.startsWith('/accounts/created') ? 201 : 200, {
          'content-type': 'application/json',
          'x-upstream': 'recorded',
          'keep-alive': 'timeout=5',
          'x-hop': 'secret-hop',
          connection: 'keep-alive, x-hop',
        });
        response.end(JSON.stringify({ method: recorded.method, url: recorded.url, orgId: request.headers['x-organization-id'] ?? null, bodyLength: recorded.body.length }));
      };
      if (held !== undefined) void held.then(answer);
      else answer();
    });
  });
  // Longer than the `keep-alive: timeout=5` it announces: a server that closes an idle
  // connection before the time it announced races the gateway's reuse of it (a 502 for a
  // request that cannot be retried), which is that server's bug, not the gateway's.
  server.keepAliveTimeout = 6000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  upstream.port = address.port;
  upstream.url = `http://127.0.0.1:${address.port}`;
  upstream.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return upstream;
}
