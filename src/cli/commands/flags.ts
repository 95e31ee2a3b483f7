// The flags several command families share, declared once so that each reads the same in every usage line.
import type { FlagSpec } from '../command-table.js';

export const orgFlag: FlagSpec = { name: 'org', type: 'string', value: 'id', required: true };
