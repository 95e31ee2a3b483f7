import { fileURLToPath } from 'node:url';
import {
  Server,
  ServerCredentials,
  loadPackageDefinition,
  type ServerUnaryCall,
  type sendUnaryData,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import type { EdgeDecider, EdgeDecision, EdgeDeny, EdgeRequest } from '../decision.js';
import { checkResponseOf, edgeRequestOf, type CheckRequestMessage, type CheckResponseMessage } from './check-mapping.js';

/**
 * Envoy `ext_authz` in gRPC mode (also Istio's envoyExtAuthzGrpc and Envoy Gateway's extAuth.grpc):
 * `envoy.service.auth.v3.Authorization/Check` over h2c on its own port. Each call is mapped to
 * one EdgeRequest, decided by the same EdgeDecider as the HTTP endpoints, and answered as a
 * CheckResponse. The protos are Envoy's own, vendored byte for byte (protos/ORIGIN.md says from
 * where; scripts/vendor-envoy-protos.mjs --check proves it); the build copies them to dist/.
 */

/** The include root of the vendored protos, next to this module in src/ and in dist/. */
export const PROTO_ROOT = fileURLToPath(new URL('./protos/', import.meta.url));
export const EXTERNAL_AUTH_PROTO = 'envoy/service/auth/v3/external_auth.proto';

/**
 * proto-loader options: field names as in the .proto (keepCase: the mapping reads
 * `socket_address`, `header_map`), enums as names, no defaults filled in (absence stays visible),
 * oneofs reported. Shared with the contract tests, so they decode exactly as the server encodes.
 */
export const PROTO_LOADER_OPTIONS: Options = { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true, includeDirs: [PROTO_ROOT] };

/** The Authorization service definition, loaded once per process (about 20 small files). */
let service: ServiceDefinition | undefined;
export function authorizationService(): ServiceDefinition {
  if (service !== undefined) return service;
  const definition = loadPackageDefinition(loadSync(EXTERNAL_AUTH_PROTO, PROTO_LOADER_OPTIONS));
  const found = (definition as unknown as { envoy: { service: { auth: { v3: { Authorization: { service: ServiceDefinition } } } } } }).envoy.service.auth.v3.Authorization;
  service = found.service;
  return service;
}

/**
 * The address part of grpc-js's `call.getPeer()`, which is `${remoteAddress}:${remotePort}` with
 * no brackets around an IPv6 address ("::1:50412"): the port is what follows the last colon.
 */
export function peerAddress(peer: string): string {
  const colon = peer.lastIndexOf(':');
  if (colon <= 0 || !/^\d+$/.test(peer.slice(colon + 1))) return peer;
  const address = peer.slice(0, colon);
  return address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
}

export type ExtAuthzGrpcOptions = {
  /** The one decision function (lane edge-http's createEdgeDecider, or any EdgeDecider). */
  decide: EdgeDecider;
  /** AUTHGATE_AUTHZ_HOST. */
  host: string;
  /** AUTHGATE_AUTHZ_GRPC_PORT (0: an ephemeral port, for tests). */
  port: number;
  /** AUTHGATE_AUTHZ_TRUSTED_PROXIES, compiled: is this transport peer a proxy we take requests from? */
  trusted: (address: string) => boolean;
  /** The refusal of an untrusted peer (403, rendered like the HTTP endpoints' one), made without deciding. */
  untrusted: () => EdgeDeny;
  /** The refusal when the decider throws: a denied 500 (internalError), never an RPC error (Envoy would make that its status_on_error, 403 by default). */
  failed: (error: unknown) => EdgeDeny;
  /** AUTHGATE_AUTHZ_REMOVE_CREDENTIAL. */
  removeCredential: boolean;
  /**
   * Called after a Check answered without the decider (an untrusted peer, a failing decider), for
   * its metric and access line: the decider records its own. `startedAt` is performance.now()
   * when the call arrived. Never throws into the call.
   */
  onUndecided?: (request: EdgeRequest | undefined, refusal: EdgeDeny, startedAt: number) => void;
};

export type ExtAuthzGrpcServer = {
  /** The bound port (the configured one, or the ephemeral one for 0). */
  port: number;
  /** Stops taking calls, lets the running ones answer (bounded by `graceMs`), then closes every connection. */
  close: (graceMs?: number) => Promise<void>;
};

/** Builds the Check handler: trust first, then one decision, one answer; never an RPC error for a decision. */
function checkHandler(options: ExtAuthzGrpcOptions) {
  return (call: ServerUnaryCall<CheckRequestMessage, CheckResponseMessage>, callback: sendUnaryData<CheckResponseMessage>): void => {
    const startedAt = performance.now();
    const message = call.request ?? {};
    const peer = peerAddress(call.getPeer());
    const refuse = (request: EdgeRequest | undefined, refusal: EdgeDeny): void => {
      callback(null, checkResponseOf(refusal, message, options));
      try {
        options.onUndecided?.(request, refusal, startedAt);
      } catch {
        // Observability must never turn an answered Check into an error.
      }
    };
    if (!options.trusted(peer)) {
      refuse(undefined, options.untrusted());
      return;
    }
    let request: EdgeRequest;
    let decided: EdgeDecision | Promise<EdgeDecision>;
    try {
      request = edgeRequestOf(message, peer);
    } catch (error) {
      refuse(undefined, options.failed(error));
      return;
    }
    try {
      decided = options.decide(request);
    } catch (error) {
      refuse(request, options.failed(error));
      return;
    }
    // A decision that cannot be mapped is a fault like a throwing decider: its refusal, never an
    // RPC error (grpc-js would send INTERNAL for a throw) nor an unhandled rejection.
    const answer = (decision: EdgeDecision): void => {
      let response: CheckResponseMessage;
      try {
        response = checkResponseOf(decision, message, options);
      } catch (error) {
        return refuse(request, options.failed(error));
      }
      callback(null, response);
    };
    if (!(decided instanceof Promise)) {
      answer(decided);
      return;
    }
    decided.then(answer, (error: unknown) => refuse(request, options.failed(error)));
  };
}

/** Starts the ext_authz gRPC server (plaintext h2c: it is reached by the proxy on an internal network). */
export async function startExtAuthzGrpc(options: ExtAuthzGrpcOptions): Promise<ExtAuthzGrpcServer> {
  const server = new Server({
    // Envoy keeps one HTTP/2 connection per worker open for good: grpc-js's defaults never close
    // a connection for idleness or age (grpc.max_connection_idle_ms / _age_ms unset), kept so.
    // A CheckRequest carries headers only (authgate never asks for the body): 1 MiB is plenty.
    'grpc.max_receive_message_length': 1024 * 1024,
  });
  server.addService(authorizationService(), { Check: checkHandler(options) });
  const host = options.host.includes(':') && !options.host.startsWith('[') ? `[${options.host}]` : options.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  return {
    port,
    close: (graceMs = 5000) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        timer.unref();
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
