import net from 'node:net';

/**
 * Sends bytes exactly as given (request line, duplicate headers, absolute-form targets: things
 * an HTTP client library would refuse to send) and returns the status line and raw answer.
 */
export function rawRequest(port: number, text: string | Buffer, timeoutMs = 3000): Promise<{ status: number; raw: string }> {
  return new Promise((resolve) => {
    let out = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    const finish = () => {
      socket.destroy();
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(out);
      resolve({ status: match ? Number(match[1]) : 0, raw: out });
    };
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
    });
    socket.on('end', finish);
    socket.on('error', finish);
    socket.setTimeout(timeoutMs, finish);
  });
}

export function requestText(method: string, target: string, headers: Array<[string, string]>): string {
  return `${method} ${target} HTTP/1.1\r\nHost: gateway.test\r\nConnection: close\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

/** The first answer in a raw reply: status, headers (lower-cased names; repeated ones joined) and body. */
export function parseResponse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const length = Number(headers['content-length'] ?? NaN);
  const rest = end === -1 ? '' : raw.slice(end + 4);
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: Number.isNaN(length) ? rest : rest.slice(0, length) };
}

/**
 * What curl does for a body over 1 MiB: send the head with `Expect: 100-continue`, wait for
 * `100 Continue` (curl gives up waiting after 1 s; here `continueWaitMs`), then the body.
 * If a final answer comes first, the body is not sent. `raw` is everything received.
 */
export function rawExpectContinue(
  port: number,
  head: string,
  body: Buffer,
  options: { continueWaitMs?: number; timeoutMs?: number } = {},
): Promise<{ status: number; raw: string; sawContinue: boolean; bodySent: boolean }> {
  return new Promise((resolve) => {
    let out = '';
    let bodySent = false;
    let sawContinue = false;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(head));
    const sendBody = () => {
      if (bodySent || socket.destroyed) return;
      bodySent = true;
      socket.write(body);
    };
    const waitForContinue = setTimeout(sendBody, options.continueWaitMs ?? 1000);
    const finish = () => {
      clearTimeout(waitForContinue);
      socket.destroy();
      // The final answer: the last status line that is not an interim 1xx.
      const finals = [...out.matchAll(/HTTP\/1\.[01] ([2-5]\d\d)/g)];
      resolve({ status: finals.length > 0 ? Number(finals[0]![1]) : 0, raw: out, sawContinue, bodySent });
    };
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
      if (!sawContinue && /^HTTP\/1\.1 100 [^\r]*\r\n\r\n/.test(out)) {
        sawContinue = true;
        clearTimeout(waitForContinue);
        sendBody();
      } else if (!bodySent && /^(?:HTTP\/1\.1 100 [^\r]*\r\n\r\n)?HTTP\/1\.[01] [2-5]/.test(out)) {
        clearTimeout(waitForContinue); // answered without wanting the body
      }
    });
    socket.on('end', finish);
    socket.on('error', finish);
    socket.setTimeout(options.timeoutMs ?? 10_000, finish);
  });
}
