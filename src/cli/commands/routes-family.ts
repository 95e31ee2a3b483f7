// authgate routes check|explain: the routes family's rows in the command table (parsing and help);
// the work, offline, is commands/routes.ts's (the gateway's own loader and matcher).
import type { Command, Family } from '../command-table.js';
import type { RoutesIo } from './routes.js';

const io: RoutesIo = {
  env: process.env,
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
};

/**
 * The routes commands' work, imported when one runs: it loads the gateway's route-table loader
 * (the YAML parser, TypeBox and Ajv: ~340 of the ~375 modules `authgate --help` loaded when this
 * import was static, measured with a load hook), which no other command needs.
 */
async function routesWork(): Promise<typeof import('./routes.js').routesCommand> {
  return (await import('./routes.js')).routesCommand;
}

const check: Command = {
  family: 'routes',
  action: 'check',
  args: ['file'],
  argsWhat: 'routes check takes one file: authgate routes check <file>',
  description: [
    'Check a routes file as a gateway start would (the same code),',
    'offline: every error as FILE:LINE: /json/pointer: what is wrong.',
    'Exit 0 valid, 1 not.',
  ],
  examples: ['authgate routes check routes.yaml'],
  async run({ args }) {
    return (await routesWork())(['check', ...args], io);
  },
};

const explain: Command = {
  family: 'routes',
  action: 'explain',
  args: ['METHOD', 'path'],
  argsWhat: 'routes explain takes a method and a path: authgate routes explain GET /accounts/42 [--file <file>]',
  flags: [{ name: 'file', type: 'string', value: 'file' }],
  description: [
    'Which route, scope, credentials and upstream a request would',
    'get, or why none, from the file (AUTHGATE_ROUTES_FILE unless',
    '--file; the built-in table without either). Exit 0 forwarded,',
    '1 not forwarded, 2 the file does not load.',
  ],
  examples: ['authgate routes explain GET /accounts/42 --file routes.yaml'],
  async run({ args, values }) {
    const file = values.file;
    return (await routesWork())(['explain', ...args, ...(typeof file === 'string' ? ['--file', file] : [])], io);
  },
};

export const routes: Family = { name: 'routes', commands: [check, explain] };
