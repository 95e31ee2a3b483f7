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

/**
 * One raw connection held open across steps: write bytes, wait (bounded) for what the server
 * sends, and see whether and when the server closes. For the conversations the one-shot helpers
 * above cannot have: an Expect that must not be answered with 100, a body the client keeps
 * sending after a refusal, a second request on a kept-alive connection.
 */
export type RawConnection = {
  /** Everything received so far, latin1. */
  received(): string;
  /** Writes bytes; false once the connection is gone (a write the server no longer takes). */
  write(data: string | Buffer): boolean;
  /** Resolves true as soon as `test(received)` holds, false when `timeoutMs` passes first or the connection ends without it. */
  until(test: (received: string) => boolean, timeoutMs?: number): Promise<boolean>;
  /** Resolves true when the server has ended or reset the connection, false after `timeoutMs`. */
  closedWithin(timeoutMs: number): Promise<boolean>;
  destroy(): void;
};

export function openRaw(port: number): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    let out = '';
    let closed = false;
    const waiters = new Set<() => void>();
    const wake = () => {
      for (const waiter of [...waiters]) waiter();
    };
    const socket = net.connect(port, '127.0.0.1');
    socket.on('data', (chunk) => {
      out += chunk.toString('latin1');
      wake();
    });
    const gone = () => {
      closed = true;
      wake();
    };
    socket.on('end', gone);
    socket.on('close', gone);
    socket.on('error', gone);
    const wait = (done: () => boolean, timeoutMs: number): Promise<boolean> =>
      new Promise((settle) => {
        const check = () => {
          const verdict = done();
          if (!verdict && !closed) return;
          clearTimeout(timer);
          waiters.delete(check);
          settle(verdict);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          settle(done());
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    socket.once('connect', () =>
      resolve({
        received: () => out,
        write: (data) => {
          if (closed || socket.destroyed) return false;
          socket.write(data, () => {});
          return true;
        },
        until: (test, timeoutMs = 10_000) => wait(() => test(out), timeoutMs),
        closedWithin: (timeoutMs) => wait(() => closed, timeoutMs),
        destroy: () => socket.destroy(),
      }),
    );
    socket.once('error', reject);
  });
}

/** True once `raw` holds a whole final answer (not a 1xx): its head, and its body by Content-Length. */
export function hasFinalAnswer(raw: string): boolean {
  const start = raw.search(/HTTP\/1\.[01] [2-5]\d\d /);
  if (start === -1) return false;
  const rest = raw.slice(start);
  const end = rest.indexOf('\r\n\r\n');
  if (end === -1) return false;
  const length = /\r\ncontent-length: *(\d+)/i.exec(rest.slice(0, end));
  return length === null || rest.length >= end + 4 + Number(length[1]);
}

/** The final answer in `raw` (skipping any 1xx before it), parsed; and whether a 100 came first. */
export function finalAnswer(raw: string): ReturnType<typeof parseResponse> & { after100: boolean } {
  const start = raw.search(/HTTP\/1\.[01] [2-5]\d\d /);
  const before = start === -1 ? raw : raw.slice(0, start);
  return { ...parseResponse(start === -1 ? '' : raw.slice(start)), after100: /HTTP\/1\.1 100 /.test(before) };
}
