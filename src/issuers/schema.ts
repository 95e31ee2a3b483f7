/**
 * The JSON Schema of a routes file's `issuers:` (issue 49), joined into the file's schema
 * (route-table/schema.ts). What needs more than one field (a jwksUri that is a URL, an issuer that
 * is https outside loopback) is compile.ts's.
 */
import { Type } from '@sinclair/typebox';
import { ISSUER_ALGORITHMS } from './types.js';

/** An issuer's name: the `issuer:NAME` of routes and a metrics label, so short and plain like a route id. */
export const ISSUER_NAME_PATTERN = '^[a-z0-9][a-z0-9_-]*$';
export const MAX_ISSUER_NAME_LENGTH = 40;
/** A claim's name: anything a JSON key may be, short. */
const claim = Type.String({ minLength: 1, maxLength: 200 });
const url = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });
const seconds = (maximum: number, description: string) => Type.Optional(Type.Integer({ minimum: 1, maximum, description }));

export const IssuerSchema = Type.Object(
  {
    issuer: url('The `iss` its tokens carry, exactly (an introspection answer\'s `iss`, when it has one). Discovery at <issuer>/.well-known/openid-configuration unless jwksUri is given.'),
    jwksUri: Type.Optional(url('Its key set; found by discovery unless set.')),
    audiences: Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), { minItems: 1, uniqueItems: true, description: 'Any one of them must be in the token\'s `aud`.' }),
    algorithms: Type.Optional(Type.Array(Type.Union(ISSUER_ALGORITHMS.map((alg) => Type.Literal(alg))), { minItems: 1, uniqueItems: true, description: 'Allow-list (RS256 unless set); never none, never HS*.' })),
    organization: Type.Union(
      [
        Type.Object({ claim }, { additionalProperties: false }),
        Type.Object({ fixed: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false }),
      ],
      { description: '`{claim: NAME}`: the claim whose value is the organization\'s external id at this issuer; `{fixed: ORG_ID}`: every token acts for that organization.' },
    ),
    scopes: Type.Optional(Type.Object({ claim }, { additionalProperties: false, description: 'The claim holding the scopes (space-separated or an array); `scope`, then `scp`, unless set.' })),
    requireType: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The `typ` tokens must carry (at+jwt: RFC 9068), so an ID token is not taken for an access token.' })),
    clockSkewSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 600, description: 'Leeway on exp and nbf, s (60 unless set).' })),
    scopeMap: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 100 }), { additionalProperties: false, propertyNames: { minLength: 1, maxLength: 200 }, description: 'A token scope renamed to one of the table\'s.' })),
    keys: Type.Optional(
      Type.Object(
        {
          refreshSeconds: seconds(86_400, 'Background refresh of the held key set, s (600 unless set).'),
          cooldownSeconds: seconds(3_600, 'Least time between two fetches (an unknown kid, a failure), s (30 unless set).'),
          maxStaleSeconds: seconds(604_800, 'How long after its last good fetch the key set is used while the provider does not answer, s (3600 unless set); then 503.'),
          timeoutSeconds: seconds(60, 'Each fetch\'s bound, s (5 unless set).'),
        },
        { additionalProperties: false },
      ),
    ),
    introspection: Type.Optional(
      Type.Object(
        {
          url: url('The RFC 7662 introspection endpoint (https; http only on localhost).'),
          clientId: Type.String({ minLength: 1, maxLength: 200, description: 'The client authgate authenticates as (client_secret_basic).' }),
          clientSecretFile: Type.String({ minLength: 1, maxLength: 1024, description: "The file holding that client's secret, relative to the routes file; read at load and at each reload, never logged." }),
          cacheSeconds: seconds(86_400, 'Longest an active answer is reused, never past the token\'s exp, s (60 unless set).'),
          inactiveCacheSeconds: seconds(300, 'How long an inactive answer is reused, s (5 unless set).'),
          timeoutSeconds: seconds(60, 'Each call\'s bound, s (5 unless set).'),
        },
        { additionalProperties: false, description: 'Opaque access tokens checked at the provider (RFC 7662) instead of JWTs against its keys.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const IssuersSchema = Type.Record(Type.String(), IssuerSchema, {
  additionalProperties: false,
  propertyNames: { pattern: ISSUER_NAME_PATTERN, maxLength: MAX_ISSUER_NAME_LENGTH },
  description: 'Identity providers whose access tokens (JWTs, or opaque ones by introspection) routes may take (`credentials: [issuer:NAME]`; docs/issuers.md).',
});
