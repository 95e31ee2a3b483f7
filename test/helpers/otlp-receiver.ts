/**
 * A real OTLP/HTTP trace receiver on loopback (what an OpenTelemetry Collector's otlp receiver
 * takes): POST /v1/traces with an ExportTraceServiceRequest in protobuf, the exporter's default
 * and the Collector's. It decodes the protobuf itself, by the field numbers of
 * opentelemetry/proto/collector/trace/v1/trace_service.proto and trace/v1/trace.proto, with a
 * small wire-format reader: no generated code, no second copy of the SDK's own serializer, so a
 * test reads what went over the wire, not what the SDK meant to send. It keeps the raw bodies
 * too, for the tests that look for what must never be exported.
 */
import { createServer, type Server } from 'node:http';

export type ExportedSpan = Readonly<{
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  /** 1 internal, 2 server, 3 client (SpanKind). */
  kind: number;
  attributes: Readonly<Record<string, string | number | boolean>>;
  events: readonly Readonly<{ name: string; attributes: Readonly<Record<string, string | number | boolean>> }>[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Readonly<Record<string, string | number | boolean>>;
}>;

export type OtlpReceiver = {
  url: string;
  spans: ExportedSpan[];
  bodies: Buffer[];
  /** Content-Type of every export received. */
  contentTypes: string[];
  close(): Promise<void>;
};

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

type Field = { number: number; wire: number; varint?: bigint; bytes?: Buffer; fixed?: Buffer };

/** One protobuf message's fields, in order (repeated fields appear once per value). */
function fields(buffer: Buffer): Field[] {
  const out: Field[] = [];
  let offset = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[offset++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (offset < buffer.length) {
    const key = Number(varint());
    const number = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ number, wire, varint: varint() });
    else if (wire === 1) {
      out.push({ number, wire, fixed: buffer.subarray(offset, offset + 8) });
      offset += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ number, wire, bytes: buffer.subarray(offset, offset + length) });
      offset += length;
    } else if (wire === 5) {
      out.push({ number, wire, fixed: buffer.subarray(offset, offset + 4) });
      offset += 4;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return out;
}

const all = (message: Field[], number: number) => message.filter((f) => f.number === number);
const one = (message: Field[], number: number) => message.find((f) => f.number === number);
const text = (field: Field | undefined) => field?.bytes?.toString('utf8') ?? '';
const hex = (field: Field | undefined) => field?.bytes?.toString('hex') ?? '';

/** AnyValue: 1 string, 2 bool, 3 int, 4 double (arrays and maps are not used by authgate). */
function anyValue(buffer: Buffer | undefined): string | number | boolean {
  const value = fields(buffer ?? Buffer.alloc(0));
  const string = one(value, 1);
  if (string !== undefined) return text(string);
  const bool = one(value, 2);
  if (bool !== undefined) return bool.varint === 1n;
  const int = one(value, 3);
  if (int !== undefined) return Number(BigInt.asIntN(64, int.varint ?? 0n));
  const double = one(value, 4);
  if (double?.fixed !== undefined) return double.fixed.readDoubleLE(0);
  return '';
}

/** repeated KeyValue (1 key, 2 value). */
function attributes(list: Field[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const field of list) {
    const kv = fields(field.bytes!);
    out[text(one(kv, 1))] = anyValue(one(kv, 2)?.bytes);
  }
  return out;
}

/** ExportTraceServiceRequest → the spans, each with its resource's attributes. */
export function decodeTraces(body: Buffer): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const resourceSpans of all(fields(body), 1)) {
    const rs = fields(resourceSpans.bytes!);
    const resource = attributes(all(fields(one(rs, 1)?.bytes ?? Buffer.alloc(0)), 1));
    for (const scopeSpans of all(rs, 2)) {
      for (const spanField of all(fields(scopeSpans.bytes!), 2)) {
        const span = fields(spanField.bytes!);
        const status = fields(one(span, 15)?.bytes ?? Buffer.alloc(0));
        spans.push({
          traceId: hex(one(span, 1)),
          spanId: hex(one(span, 2)),
          traceState: text(one(span, 3)),
          parentSpanId: hex(one(span, 4)),
          name: text(one(span, 5)),
          kind: Number(one(span, 6)?.varint ?? 0n),
          attributes: attributes(all(span, 9)),
          events: all(span, 11).map((event) => {
            const e = fields(event.bytes!);
            return { name: text(one(e, 2)), attributes: attributes(all(e, 3)) };
          }),
          statusCode: Number(one(status, 3)?.varint ?? 0n),
          resource,
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: '', spans: [], bodies: [], contentTypes: [], close: async () => {} };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = Buffer.concat(chunks);
      receiver.bodies.push(body);
      receiver.contentTypes.push(request.headers['content-type'] ?? '');
      receiver.spans.push(...decodeTraces(body));
      // An empty ExportTraceServiceResponse: everything accepted.
      response.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  receiver.url = `http://127.0.0.1:${port}`;
  // The exporter keeps its connection alive: closed with the server, not after its idle timeout.
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
