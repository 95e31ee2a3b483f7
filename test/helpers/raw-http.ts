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
