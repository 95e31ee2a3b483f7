import { Writable } from 'node:stream';

/** An injectable pino destination whose lines tests can read back, raw and parsed. */
export function captureLogs() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(line);
      callback();
    },
  });
  return {
    destination,
    lines,
    text: () => lines.join('\n'),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
