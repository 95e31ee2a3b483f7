// authgate org external-ids|set-external-id|remove-external-id: the id an organization has at each
// trusted issuer of the routes file (issue 49), which maps a provider token's organization claim to
// it; through the admin API (PATCH /admin/organizations/:id {externalIds}) like its neighbours.
import { call, orgPath, printJson, resolveTarget } from '../admin-client.js';
import type { Command, Refusal } from '../command-table.js';

/** What every org subcommand refuses: flags of other families, and the id as a flag. */
const refuse = (hint: string): readonly Refusal[] => [{ flags: ['session', 'all'] }, { flags: ['name', 'email'] }, { flags: ['org', 'key'], hint }];

export const orgExternalIds: Command = {
  family: 'org',
  action: 'external-ids',
  args: ['id'],
  argsWhat: 'an organization id',
  refuse: refuse('the id is an argument'),
  description: [
    "Print an organization's id at each trusted issuer of the routes file",
    'as JSON: {id, externalIds: {<issuer>: <external id>}}.',
  ],
  examples: ['authgate org external-ids org_123'],
  async run({ args: [id] }) {
    const target = resolveTarget(process.env);
    const org = (await call(target, 'GET', orgPath(id!))).body as { id: string; externalIds?: Record<string, string> };
    printJson({ id: org.id, externalIds: org.externalIds ?? {} });
    return 0;
  },
};

// The gateway checks the issuer (declared in its routes file: 400, 1260) and that no other
// organization has that id there (409, 1340), and says so (exit 1).
export const orgSetExternalId: Command = {
  family: 'org',
  action: 'set-external-id',
  args: ['id', 'issuer', 'external-id'],
  argsWhat: 'an organization id, an issuer and an external id',
  refuse: refuse('the id, the issuer and the external id are arguments'),
  description: [
    "Set an organization's id at a trusted issuer of the routes file: the",
    "value its tokens' organization claim carries (unique per issuer across",
    'the store). Prints the organization.',
  ],
  examples: ['authgate org set-external-id org_123 corp org_8Xq2'],
  async run({ args: [id, issuer, externalId] }) {
    const target = resolveTarget(process.env);
    printJson((await call(target, 'PATCH', orgPath(id!), { externalIds: { [issuer!]: externalId } })).body);
    return 0;
  },
};

export const orgRemoveExternalId: Command = {
  family: 'org',
  action: 'remove-external-id',
  args: ['id', 'issuer'],
  argsWhat: 'an organization id and an issuer',
  refuse: refuse('the id and the issuer are arguments'),
  description: [
    "Remove an organization's id at a trusted issuer: that issuer's tokens",
    'naming it are refused (at once on the replica asked, on the others',
    "within the credential cache's TTL). Prints the organization.",
  ],
  async run({ args: [id, issuer] }) {
    const target = resolveTarget(process.env);
    printJson((await call(target, 'PATCH', orgPath(id!), { externalIds: { [issuer!]: null } })).body);
    return 0;
  },
};
