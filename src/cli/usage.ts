// The top-level usage: every command's help from the command table, then the options, environment and examples.
import { commandHelp, type Family, usageEntry } from './command-table.js';

const OPTIONS = `Options:
  -h, --help              Print this help.
  -V, --version           Print the version.

Environment:
  AUTHGATE_ADMIN_TOKEN    Admin API bearer token (required).
  AUTHGATE_ADMIN_URL      Base URL of the ops port
                          (default: http://127.0.0.1:\${AUTHGATE_OPS_PORT:-9090}).
  AUTHGATE_OPS_PORT       Ops port used by the default AUTHGATE_ADMIN_URL.

Exit status: 0 success, 1 error answered by the gateway or gateway unreachable,
2 usage or configuration error, 130 interrupted.
`;

export function usageText(families: readonly Family[]): string {
  const commands = families.flatMap((family) => family.commands);
  const examples = commands.flatMap((command) => command.examples ?? []);
  return [
    'Usage: authgate <command> [options]\n\nCommands:\n',
    ...commands.map(commandHelp),
    usageEntry('help', ['Print this help.']),
    '\n',
    OPTIONS,
    '\nExamples:\n',
    ...examples.map((line) => `  ${line}\n`),
  ].join('');
}
