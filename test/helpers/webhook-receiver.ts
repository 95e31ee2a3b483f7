import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceivedNotice = Readonly<{ method: string; url: string; headers: IncomingHttpHeaders; raw: Buffer; at: number }>;

/** What the receiver answers to its n-th request (from 0): a status (with headers), or `hold` (no answer until release()). */
export type Answer = (n: number) => number | Readonly<{ status: number; headers: Record<string, string> }> | 'hold';

export type WebhookReceiver = {
  url: string;
  received: ReceivedNotice[];
  /** Answers every held request 200. */
  release(): void;
  close(): Promise<void>;
};

/** A real HTTP receiver on loopback that keeps each request's exact bytes, for signature checks. */
export async function startWebhookReceiver(answer: Answer = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedNotice[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const n = received.length;
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, raw: Buffer.concat(chunks), at: Date.now() });
      const answered = answer(n);
      if (answered === 'hold') held.push(response);
      else if (typeof answered === 'number') response.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
      else response.writeHead(answered.status, { 'content-type': 'text/plain', ...answered.headers }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/authgate`,
    received,
    release() {
      for (const response of held.splice(0)) if (!response.writableEnded) response.writeHead(200).end('ok');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (taken and let go): connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
