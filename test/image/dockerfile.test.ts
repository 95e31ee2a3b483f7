/**
 * The image, built without a container engine: the build context is made of exactly the files
 * .dockerignore admits, the Dockerfile's build stage runs its own COPY and RUN steps in it, the
 * runtime stage's COPY --from steps assemble the final /app, and that /app is started with the
 * image's CMD, ENV and HEALTHCHECK. The runtime stage's RUN (apt-get, useradd, removing npm)
 * changes a system, not the project, and is not replayed; what it must leave out is checked below.
 *
 * npm runs from the local cache where it can (npm_config_prefer_offline), so the build costs
 * about what `npm ci && npm run build` costs here.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ADMIN_TOKEN, JWT_SECRET, eventually, send } from '../helpers/gateway.js';
import { buildContextFiles, copyContext, envPairs, execForm, readDockerfile, type Stage } from '../helpers/dockerfile.js';
import { freePort } from '../helpers/redis.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const stages = readDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

// npm ci, a full build and a prune on a busy machine.
t.setTimeout(15 * 60_000);

t.test('the image runs the Node release the tests run on', async (t) => {
  const nodeVersion = pkg.devDependencies['node'];
  t.match(nodeVersion, /^\d+\.\d+\.\d+$/, 'package.json pins the node devDependency to one release');
  for (const stage of stages) t.equal(stage.base, `node:${nodeVersion}-bookworm-slim`, `stage ${stage.name ?? '?'} is on node ${nodeVersion}`);
  t.equal(process.version, `v${nodeVersion}`, 'and so do these tests (npm puts node_modules/.bin first on PATH)');
});

t.test('the final stage: production dependencies copied from the build stage, no package manager, not root, a health check', async (t) => {
  const runtime = stages.at(-1)!;
  const runs = runtime.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
  t.notOk(runs.some((run) => /\bnpm (ci|install)\b/.test(run)), 'no second npm ci');
  t.ok(runs.some((run) => run.includes('rm -rf /usr/local/lib/node_modules/npm')), 'npm is removed');
  t.ok(runs.some((run) => /tini=\S+/.test(run)), 'tini is pinned to a package version');
  t.ok(runtime.instructions.some((i) => i.keyword === 'COPY' && /--from=\S+ \S*node_modules/.test(i.args)), 'node_modules comes from the build stage');
  t.ok(runtime.instructions.some((i) => i.keyword === 'USER' && !/^(0|root)\b/.test(i.args)), 'not root');
  t.ok(runtime.instructions.some((i) => i.keyword === 'HEALTHCHECK'), 'a health check');
});

t.test('built from the .dockerignore context by the Dockerfile, the image starts and is live', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'authgate-image-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const context = join(work, 'context');
  const files = buildContextFiles(ROOT);
  copyContext(ROOT, files, context);
  t.ok(files.includes('package-lock.json') && files.some((f) => f.startsWith('src/')), 'the context holds the sources');
  t.notOk(files.some((f) => f.startsWith('node_modules/') || f.startsWith('dist/') || f.endsWith('.test.ts') || f.startsWith('.git')), 'and nothing built, installed or tested');

  /** Each stage's filesystem root is a directory of its own: /app of stage build is <work>/build/app. */
  const rootOf = (stage: Stage, index: number) => join(work, 'stages', stage.name ?? String(index));
  const env: Record<string, string> = {};
  stages.forEach((stage, index) => {
    const fsRoot = rootOf(stage, index);
    let workdir = fsRoot;
    const last = index === stages.length - 1;
    for (const { keyword, args } of stage.instructions) {
      if (keyword === 'WORKDIR') {
        workdir = join(fsRoot, args);
        mkdirSync(workdir, { recursive: true });
      } else if (keyword === 'COPY') {
        const words = args.split(/\s+/);
        const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
        const [dest, ...sources] = words.filter((w) => !w.startsWith('--')).reverse();
        const source = from === undefined ? context : rootOf(stages.find((s) => s.name === from)!, 0);
        for (const src of sources.reverse()) {
          const from = join(source, src);
          const into = join(workdir, dest!);
          const target = dest!.endsWith('/') && !statSync(from).isDirectory() ? join(into, basename(src)) : into;
          cpSync(from, target, { recursive: true });
        }
      } else if (keyword === 'ENV' && last) {
        Object.assign(env, envPairs(args));
      } else if (keyword === 'RUN' && !last) {
        const run = spawnSync('sh', ['-c', args], {
          cwd: workdir,
          env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' },
          encoding: 'utf8',
        });
        if (run.status !== 0) t.fail(`RUN ${args} exited ${run.status}:\n${run.stdout.slice(-3000)}\n${run.stderr.slice(-3000)}`);
      }
    }
  });

  const app = join(rootOf(stages.at(-1)!, stages.length - 1), 'app');
  t.ok(existsSync(join(app, 'dist/main.js')) && existsSync(join(app, 'dist/console/index.html')), 'the final /app holds the built gateway and console');
  for (const name of Object.keys(pkg.dependencies)) t.ok(existsSync(join(app, 'node_modules', name)), `production dependency ${name} is there`);
  // What the lockfile marks dev-only (a devDependency that a production one also needs, yaml say, is not).
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const devOnly = Object.entries(lock.packages).filter(([path, entry]) => entry.dev === true && path.split('node_modules/').length === 2).map(([path]) => path);
  t.ok(devOnly.includes('node_modules/typescript') && devOnly.includes('node_modules/node'), 'the lockfile marks the build tools dev-only');
  const shipped = devOnly.filter((path) => existsSync(join(app, path)));
  t.same(shipped, [], 'no dev-only package is in the final node_modules');

  const cmd = execForm(stages.at(-1)!.instructions.find((i) => i.keyword === 'CMD')!.args);
  t.equal(cmd[0], 'node');
  const port = await freePort();
  const opsPort = await freePort();
  const settings: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    ...env,
    AUTHGATE_HOST: '127.0.0.1',
    AUTHGATE_OPS_HOST: '127.0.0.1',
    AUTHGATE_PORT: String(port),
    AUTHGATE_OPS_PORT: String(opsPort),
    AUTHGATE_JWT_SECRET: JWT_SECRET,
    AUTHGATE_ADMIN_TOKEN: ADMIN_TOKEN,
    AUTHGATE_UPSTREAM_URL: 'http://127.0.0.1:1',
    AUTHGATE_STORE: 'memory',
    AUTHGATE_TLS: 'offloaded',
    AUTHGATE_IDENTITY_ASSERTION: 'off',
  };
  t.equal(settings['NODE_ENV'], 'production', 'the image runs in production mode');
  let output = '';
  const child = spawn(process.execPath, cmd.slice(1), { cwd: app, env: settings, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const live = await eventually(async () => (await send(`http://127.0.0.1:${opsPort}/livez`).catch(() => ({ status: 0 }))).status === 200, 30_000, 100);
  t.ok(live, `GET /livez answers 200 ${live ? '' : output.slice(-2000)}`);

  // The image's own HEALTHCHECK command, as Docker would run it inside the container.
  const healthcheck = stages.at(-1)!.instructions.find((i) => i.keyword === 'HEALTHCHECK')!.args;
  const probe = execForm(healthcheck.slice(healthcheck.indexOf('CMD ') + 4));
  const ran = spawnSync(process.execPath, probe.slice(1), { cwd: app, env: settings, encoding: 'utf8', timeout: 30_000 });
  t.equal(ran.status, 0, 'the HEALTHCHECK command passes');
});
