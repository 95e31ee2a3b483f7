/** Small HTTP client for setup, metrics scrapes and the revocation probe: keep-alive, loopback. */
import { Agent, request, type OutgoingHttpHeaders } from 'node:http';

export type Answer = { status: number; body: string };

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

export function send(
  url: string,
  options: { method?: string; headers?: OutgoingHttpHeaders; body?: string; agent?: Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'GET',
        headers: { 'user-agent': 'authgate-bench/1.0', ...options.headers },
        agent: options.agent ?? agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export async function sendJson(url: string, options: { method?: string; headers?: OutgoingHttpHeaders; body?: unknown; expect: number }): Promise<any> {
  const answer = await send(url, {
    method: options.method ?? 'POST',
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  if (answer.status !== options.expect) throw new Error(`${options.method ?? 'POST'} ${url}: expected ${options.expect}, got ${answer.status}: ${answer.body.slice(0, 300)}`);
  return answer.body === '' ? undefined : JSON.parse(answer.body);
}

/** One value of a Prometheus text exposition, by metric name (first series). */
export function metricValue(exposition: string, name: string): number | undefined {
  for (const line of exposition.split('\n')) {
    if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{')) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (Number.isFinite(value)) return value;
    }
  }
  return undefined;
}

export { Agent };
