/** Issue 30's gRPC scenario: whether a build serves Envoy ext_authz over gRPC (a --gateway/--compare build may predate it). */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function authzGrpcUnsupported(main: string): string | undefined {
  if (existsSync(join(dirname(main), 'edge-authz', 'grpc', 'server.js'))) return undefined;
  return `the build under test (${main}) has no ext_authz gRPC server (AUTHGATE_AUTHZ_GRPC_PORT, issue 30)`;
}
