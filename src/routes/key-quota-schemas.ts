// An API key's own quota (issue 47) in the key routes' bodies and answers (routes/schemas.ts):
// the shape of a plan's quota, only within its organization's plan's (limits/key-quotas.ts).
import { Type } from '@sinclair/typebox';

export const KeyQuotaInput = Type.Object(
  {
    requests: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'Requests (quota units: a route\'s cost) per period.' }),
    per: Type.Union([Type.Literal('day'), Type.Literal('month')], { description: 'The UTC calendar period: the plan\'s.' }),
  },
  {
    additionalProperties: false,
    description: "The key's own quota, counted beside its organization's: the organization's plan must have a quota of the same period, and this one not above it (400, 1200, otherwise).",
  },
);

export const KeyQuotaChange = Type.Union([KeyQuotaInput, Type.Null()], { description: `${KeyQuotaInput.description} null removes it.` });

export const KeyQuotaShown = Type.Union(
  [Type.Object({ requests: Type.Integer(), per: Type.Union([Type.Literal('day'), Type.Literal('month')]) }), Type.Null()],
  { description: 'Its own quota; null when only its organization\'s applies.' },
);
