import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { commandHelp, commandName, flagsOf } from '../../src/cli/command-table.js';
import { FAMILIES, parserOptions } from '../../src/cli/families.js';
import { usageText } from '../../src/cli/usage.js';

/**
 * The help is generated from the command table the parser reads: every command has its entry,
 * every flag a command takes is in its entry, and the parser takes no flag that no entry shows.
 * usage.txt is the usage as the first CLI printed it: the table reproduces it to the byte.
 */

const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));
const commands = FAMILIES.flatMap((family) => family.commands);

t.test('every command in the table has help, and it lists every flag the command takes', async (t) => {
  t.ok(commands.length >= 11, 'the table holds the commands');
  const usage = usageText(FAMILIES);
  for (const command of commands) {
    const name = commandName(command);
    const help = commandHelp(command);
    t.match(help, new RegExp(`^  ${name}( |\\n)`), `${name}: its entry starts with its name`);
    t.ok(command.description.length > 0 && command.description.every((line) => line.trim() !== '' && line.length <= 70), `${name}: a description, lines of at most 70 characters (column 26 on)`);
    t.ok(usage.includes(help), `${name}: its entry is in the usage`);
    for (const flag of flagsOf(command)) {
      const shown = flag.value === undefined ? `--${flag.name}` : `--${flag.name} <${flag.value}>`;
      t.ok(help.includes(shown), `${name}: ${shown} in its help`);
    }
    for (const arg of command.args ?? []) t.ok(help.includes(`<${arg}>`), `${name}: <${arg}> in its help`);
  }
});

t.test('the parser takes exactly the flags the help shows, with one type each', async (t) => {
  const options = parserOptions(FAMILIES);
  const shown = new Set(commands.flatMap((command) => flagsOf(command).map((flag) => flag.name)));
  t.same(Object.keys(options).sort(), ['help', 'version', ...shown].sort());
  const usage = usageText(FAMILIES);
  for (const name of Object.keys(options)) t.ok(usage.includes(`--${name}`), `--${name} is in the usage`);
  for (const command of commands) {
    for (const flag of flagsOf(command)) t.equal(options[flag.name]?.type, flag.type, `${commandName(command)} --${flag.name}: ${flag.type}`);
  }
  t.throws(
    () => parserOptions([{ name: 'x', commands: [{ family: 'x', action: 'a', flags: [{ name: 'org', type: 'boolean' }], description: ['d'], run: async () => 0 }] }, ...FAMILIES]),
    /--org is a boolean in one command and a string/,
    'two commands cannot give one flag two types',
  );
  const names = commands.map(commandName);
  t.equal(new Set(names).size, names.length, 'no command twice');
});

t.test('the usage is the one users know, and --help prints it', async (t) => {
  const known = readFileSync(new URL('usage.txt', import.meta.url), 'utf8');
  t.equal(usageText(FAMILIES), known, 'generated, byte for byte the usage of the first CLI');
  t.ok(Math.max(...usageText(FAMILIES).split('\n').map((line) => line.length)) <= 96, 'no line over 96 characters');
  const printed = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--help'], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
  t.equal(printed, known, 'the built CLI prints it');
});
