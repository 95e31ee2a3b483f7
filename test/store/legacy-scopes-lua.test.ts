// The Lua copy of the legacy scope order (scripts/lib/entryParts.lua) must be LEGACY_SCOPES: a key
// stored as a bit set is read by position, and one list out of step would change what it holds.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { LEGACY_SCOPES } from '../../src/authz/scopes.js';

const lua = readFileSync(new URL('../../src/store/redis/scripts/lib/entryParts.lua', import.meta.url), 'utf8');
const line = /^local LEGACY = \{(.*)\}$/m.exec(lua);
t.ok(line, 'entryParts.lua declares LEGACY');
t.same(
  line![1]!.split(',').map((name) => name.trim().replace(/^'|'$/g, '')),
  [...LEGACY_SCOPES],
  'the same names in the same order as authz/scopes.ts LEGACY_SCOPES',
);
