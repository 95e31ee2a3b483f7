import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { settingSpec } from '../../src/config/settings.js';
import {
  CONTEXT_WORD_MIN_LENGTH,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH_DEFAULT,
  PASSWORD_MIN_LENGTH_FLOOR,
  codePointLength,
  createPasswordPolicy,
  loadPasswordBlocklist,
} from '../../src/credentials/password-policy.js';
import { Problem, problems } from '../../src/problems.js';

/** credentials/password-policy.ts itself, and AUTHGATE_PASSWORD_MIN_LENGTH's bounds. */

const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));
const context = { name: 'Acme', email: 'owner@acme.test' };

t.test('code points, not UTF-16 units; a lone surrogate is one', async (t) => {
  t.equal(codePointLength(''), 0);
  t.equal(codePointLength('abc'), 3);
  t.equal(codePointLength('🦊🦊'), 2);
  t.equal(codePointLength('e\u0301'), 2, 'a combining mark is a code point of its own');
  t.equal(codePointLength('\ud83e'), 1, 'a lone high surrogate');
  t.equal(codePointLength('\udd8a\ud83e'), 2, 'a low then a high surrogate');
  t.equal(codePointLength('x'.repeat(10_000), 128), 129, 'stops once past the limit');
});

t.test('the figures are NIST SP 800-63B-4\'s, and the setting carries them', async (t) => {
  t.equal(PASSWORD_MIN_LENGTH_FLOOR, 8);
  t.equal(PASSWORD_MIN_LENGTH_DEFAULT, 15);
  t.equal(PASSWORD_MAX_LENGTH, 128);
  const spec = settingSpec('AUTHGATE_PASSWORD_MIN_LENGTH');
  t.same({ default: spec.default, min: spec.type.min, max: spec.type.max }, { default: 15, min: 8, max: 128 });
  t.throws(() => createPasswordPolicy({ minLength: 7 }), RangeError, 'the policy itself refuses a minimum under the floor');
  t.throws(() => createPasswordPolicy({ minLength: 129 }), RangeError);
});

t.test('AUTHGATE_PASSWORD_MIN_LENGTH: 15 by default, 8 to 128, anything else a configuration error', async (t) => {
  const minOf = (value?: string) => {
    const loaded = loadConfig(value === undefined ? {} : { AUTHGATE_PASSWORD_MIN_LENGTH: value });
    return loaded.ok ? loaded.config.passwords.minLength : loaded.errors.join('; ');
  };
  t.equal(minOf(), 15);
  t.equal(minOf('8'), 8);
  t.equal(minOf('128'), 128);
  for (const bad of ['7', '0', '-15', '129', '15.5', 'fifteen']) t.match(minOf(bad), /AUTHGATE_PASSWORD_MIN_LENGTH/, `${bad} is refused by name`);

  // `authgate config check`, a real process on the built code: exit 1, the setting named.
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'config', 'check'], { env: { PATH: process.env['PATH'] ?? '', AUTHGATE_PASSWORD_MIN_LENGTH: '7' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  t.equal(run.code, 1, 'config check exits 1');
  t.match(run.stdout + run.stderr, /AUTHGATE_PASSWORD_MIN_LENGTH/);
});

t.test('the blocklist: tens of thousands of lower-case entries, kept from 8 code points, built once', async (t) => {
  const list = loadPasswordBlocklist();
  t.ok(list.size > 15_000, `${list.size} entries`);
  t.equal(loadPasswordBlocklist(), list, 'one Set per process');
  for (const entry of list) {
    if (entry !== entry.toLowerCase() || codePointLength(entry) < PASSWORD_MIN_LENGTH_FLOOR) {
      t.fail(`entry of the wrong form: ${entry.length} units`);
      break;
    }
  }
  t.ok(list.has('passwordpassword') && list.has('1qaz2wsx3edc4rfv'), 'common ones are there');
  t.notOk(list.has('hunter2'), 'shorter than the floor: refused as too short before the list is read');
});

t.test('each reason, in order: length, then the blocklist, then context words', async (t) => {
  const policy = createPasswordPolicy({ minLength: 15 });
  t.equal(policy.check('quiet-ferry-🦊🦊', context), 'passwordTooShort');
  t.equal(policy.check('quiet-ferry-🦊🦊🦊', context), undefined);
  t.equal(policy.check('x'.repeat(129), context), 'passwordTooLong');
  t.equal(policy.check('x'.repeat(128), context), undefined, 'no composition rule: one repeated character is long enough');
  t.equal(policy.check('PASSWORDPASSWORD', context), 'passwordBlocklisted');
  t.equal(policy.check('acmeacme', context), 'passwordTooShort', 'too short comes first');
  t.equal(policy.check('the ACME passphrase', context), 'passwordContainsContext', 'the name, any case');
  t.equal(policy.check('an OWNER passphrase', context), 'passwordContainsContext', "the e-mail's local part, any case");
  t.equal(policy.check('acme.test is the domain', context), 'passwordContainsContext', 'the name, wherever it is');
  t.equal(policy.check('a passphrase on acme', { name: '  Acme  ', email: ' Someone@x.test ' }), 'passwordContainsContext', 'the name trimmed');
  t.equal(policy.check('a passphrase of someone', { name: 'Bo', email: 'someone@x.test' }), 'passwordContainsContext');
  t.equal(CONTEXT_WORD_MIN_LENGTH, 4);
  t.equal(policy.check('bonbons and more bonbons', { name: 'Bo', email: 'jo@x.test' }), undefined, 'a name or local part under 4 code points is not looked for');
  t.equal(policy.check('a passphrase for the team', { name: 'Team', email: 'x@y.test' }), 'passwordContainsContext', 'from 4 code points it is');
  const lenient = createPasswordPolicy({ minLength: 8 });
  t.equal(lenient.check('ferry🦊7', context), 'passwordTooShort');
  t.equal(lenient.check('ferry🦊78', context), undefined);
  t.equal(lenient.check('Password1', context), 'passwordBlocklisted', 'a lower minimum meets more of the list');
});

t.test('enforce throws the reason\'s problem, a 400 whose detail names the rule and never the password', async (t) => {
  const policy = createPasswordPolicy({ minLength: 15 });
  const cases = [
    ['short', 'passwordTooShort', 1213],
    ['x'.repeat(200), 'passwordTooLong', 1214],
    ['QWERTYUIOP12345', 'passwordBlocklisted', 1215],
    ['owner of the acme account', 'passwordContainsContext', 1216],
  ] as const;
  for (const [password, name, code] of cases) {
    let thrown: unknown;
    try {
      policy.enforce(password, context);
    } catch (error) {
      thrown = error;
    }
    t.type(thrown, Problem);
    const problem = thrown as Problem;
    t.equal(problem.problem, name);
    t.same({ status: problems[name].status, code: problems[name].code }, { status: 400, code });
    t.match(problem.reason, /^password_/);
    t.ok((problem.detail ?? '').length > 20);
    for (const secret of [password, 'acme', 'owner']) t.notOk(problem.detail?.toLowerCase().includes(secret.slice(0, 40)), `${name}: the detail does not repeat ${secret.slice(0, 10)}`);
  }
  t.doesNotThrow(() => policy.enforce('correct horse battery', context), "the README's password passes");
});
