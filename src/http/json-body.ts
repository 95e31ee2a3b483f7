import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Problem } from '../problems.js';

export const AUTH_BODY_LIMIT = 64 * 1024;

/**
 * JSON bodies of the gateway's own routes: fastify's parser (prototype poisoning refused),
 * wrapped so that compressed bodies are refused (415) instead of inflated, an empty body is
 * "no body", and anything the parser throws (a RangeError from absurd nesting) is a 400.
 */
export function useStrictJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: AUTH_BODY_LIMIT }, (request: FastifyRequest, body: string | Buffer, done) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      done(new Problem('unsupportedMediaType', 'Compressed request bodies are not accepted.'), undefined);
      return;
    }
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    try {
      parseJson(request, body as string, (error: (Error & { statusCode?: number }) | null, value: unknown) => {
        if (error === null) done(null, value);
        else done(error.statusCode === 400 ? error : new Problem('malformedJson'), undefined);
      });
    } catch {
      done(new Problem('malformedJson'), undefined);
    }
  });
}
