/**
 * The image build without a container engine: the build context exactly as the Docker CLI sends
 * it (the files .dockerignore admits, matched by @balena/dockerignore, which follows moby's
 * rules), and the Dockerfile read into its stages and instructions, so a test can replay the
 * steps that run inside the project's own files (COPY, WORKDIR, the build stage's RUN) in a
 * temporary directory.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import dockerignore from '@balena/dockerignore';

// A CommonJS module (module.exports = factory) whose types declare an ES default export: under
// NodeNext the import is the factory itself at run time.
const ignore = dockerignore as unknown as typeof dockerignore.default;

export type Instruction = { keyword: string; args: string };
export type Stage = { base: string; name: string | undefined; instructions: Instruction[] };

/** The Dockerfile's stages: line continuations joined, comments and blank lines dropped. */
export function readDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (pending !== '' && line.startsWith('#')) continue; // a comment inside a continued RUN
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    const whole = (pending + line).trim();
    pending = '';
    const match = /^(\S+)\s+(.*)$/s.exec(whole);
    if (match === null) throw new Error(`Dockerfile: cannot read ${whole}`);
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    if (keyword === 'FROM') {
      const [base, as, name] = args.split(/\s+/);
      stages.push({ base: base!, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`Dockerfile: ${keyword} before FROM`);
    stage.instructions.push({ keyword, args });
  }
  return stages;
}

/** An exec-form argument list (`["node", "dist/main.js"]`), as JSON. */
export function execForm(args: string): string[] {
  const list: unknown = JSON.parse(args);
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) throw new Error(`not an exec form: ${args}`);
  return list as string[];
}

/** `ENV a=b c=d` (and the old `ENV a b`) as pairs. */
export function envPairs(args: string): Record<string, string> {
  if (!args.includes('=')) {
    const [name, ...value] = args.split(/\s+/);
    return { [name!]: value.join(' ') };
  }
  return Object.fromEntries(args.split(/\s+/).map((pair) => pair.split('=', 2).map((part) => part.replace(/^"|"$/g, '')) as [string, string]));
}

/**
 * Every file path (relative, with `/`) of `root` that the Docker CLI puts in the build context.
 * Like moby's walker, a directory that is excluded is not entered unless an exception pattern
 * (`!…`) could match inside it.
 */
export function buildContextFiles(root: string): string[] {
  const rules = readFileSync(join(root, '.dockerignore'), 'utf8');
  const matcher = ignore().add(rules);
  const exceptions = rules
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('!'))
    .map((line) => posix.normalize(line.slice(1).replace(/^\/+/, '')));
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        const excluded = matcher.ignores(path);
        if (excluded && !exceptions.some((pattern) => pattern.startsWith(`${path}/`) || pattern.includes('*'))) continue;
        walk(path);
      } else if (!matcher.ignores(path)) {
        files.push(path);
      }
    }
  };
  walk('');
  return files.sort();
}

/** Copies the context's files to `target`, keeping their relative paths. */
export function copyContext(root: string, files: readonly string[], target: string): void {
  for (const file of files) {
    mkdirSync(join(target, posix.dirname(file)), { recursive: true });
    cpSync(join(root, file), join(target, file));
  }
}
