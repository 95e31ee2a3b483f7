/**
 * The local OTLP/HTTP receiver the tracing-on-100% scenario exports to (issue 33): it reads each
 * export whole and answers an empty ExportTraceServiceResponse (200), as a Collector's otlp
 * receiver does, decoding nothing: its own cost stays out of the gateway's figures.
 */
import { createServer } from 'node:http';
import { serveAsChild } from './lib/child-server.js';

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
    response.end();
  });
});
serveAsChild(server);
