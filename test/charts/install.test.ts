/**
 * The chart installed as documented (issue 27): what default values do, the production install of
 * docs/operations-kubernetes.md run as written (kubectl and helm stubbed, recording what they were given), the
 * JWKS where upstreams can reach it, the optional Ingress / HTTPRoute / PrometheusRule, the Redis
 * ACL user and the config-check init container. Rendered with a real Helm 3 (test/helpers/helm.ts).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { CHART_DIR, REPO_ROOT, getHelm, helm, renderChart, templateArgs, type K8sObject } from '../helpers/helm.js';
import { loadConfig } from '../../src/config/load.js';

const NAMESPACE = 'authgate';
const RELEASE = 'authgate';
const UPSTREAM = 'config.upstreamUrl=http://api.apps.svc.cluster.local:8080';

const work = mkdtempSync(join(tmpdir(), 'authgate-chart-install-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

function valuesFile(values: object): string {
  const path = join(work, `values-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, stringify(values));
  return path;
}

const render = (set: string[] = [], files: string[] = [], namespace = NAMESPACE) =>
  renderChart({ release: RELEASE, namespace, set, valuesFiles: files });

function only(docs: K8sObject[], kind: string): K8sObject[] {
  return docs.filter((d) => d.kind === kind);
}
function one<T = any>(docs: K8sObject[], kind: string, name?: string): T {
  const found = only(docs, kind).filter((d) => name === undefined || d.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as T;
}

t.before(() => {
  getHelm();
});

t.test('default values: helm refuses with a message naming config.upstreamUrl, instead of pods that crash-loop', async (t) => {
  const res = await helm(templateArgs({ release: RELEASE, namespace: NAMESPACE }));
  t.not(res.status, 0, 'helm template with the default values fails');
  t.match(res.stderr, /config\.upstreamUrl/, 'and names the missing value');
  const lint = await helm(['lint', CHART_DIR]);
  t.not(lint.status, 0, 'helm lint with the default values fails too');
  const empty = await helm(templateArgs({ release: RELEASE, namespace: NAMESPACE, set: ['config.upstreamUrl='] }));
  t.not(empty.status, 0, 'an empty upstream URL is refused');
  const badSecret = await helm(templateArgs({ release: RELEASE, namespace: NAMESPACE, set: [UPSTREAM, 'existingSecret=Not_A_Name'] }));
  t.not(badSecret.status, 0, 'an existingSecret that is no Secret name is refused');
  t.match(badSecret.stderr, /existingSecret/);
  // With the upstream given, the rest is generated (secrets, identity key) and the gateway accepts it.
  const docs = await render([UPSTREAM]);
  const cm = one(docs, 'ConfigMap', RELEASE).data as Record<string, string>;
  const secret = one(docs, 'Secret').data as Record<string, string>;
  const keyDir = mkdtempSync(join(work, 'id-'));
  writeFileSync(join(keyDir, 'identity-key.pem'), Buffer.from(secret['identity-key.pem']!, 'base64'));
  const env: Record<string, string> = { ...cm, AUTHGATE_IDENTITY_KEY_FILE: join(keyDir, 'identity-key.pem') };
  for (const k of ['AUTHGATE_JWT_SECRET', 'AUTHGATE_ADMIN_TOKEN']) env[k] = Buffer.from(secret[k]!, 'base64').toString('utf8');
  t.doesNotThrow(() => loadConfig(env), 'the rendered settings and secrets are a valid production config');
});

// ---------------------------------------------------------------------------------------------
// docs/operations-kubernetes.md's production install, run as written.

/** The ```sh block of docs/operations-kubernetes.md's "Kubernetes with Helm" section. */
function installBlock(): string {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'operations-kubernetes.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Kubernetes with Helm'));
  const m = /```sh\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('no sh block in "Kubernetes with Helm"');
  return m[1]!;
}

type Recorded = { tool: string; args: string[]; files: Record<string, string> };

/** Runs the block in bash with kubectl and helm replaced by stubs that record what they got. */
function runInstallBlock(): Recorded[] {
  const dir = mkdtempSync(join(work, 'install-'));
  const bin = join(dir, 'bin');
  const out = join(dir, 'out');
  mkdirSync(bin);
  mkdirSync(out);
  // The stub reads every --from-file while it runs (as kubectl does: a process substitution's
  // descriptor exists only then) and keeps each --from-literal value under its key.
  const stub = `#!/usr/bin/env bash
set -euo pipefail
d=$(mktemp -d "${out}/$(basename "$0").XXXXXX")
mkdir "$d/files"
printf '%s\\0' "$@" > "$d/args"
for a in "$@"; do
  case "$a" in
    --from-literal=*) kv="\${a#--from-literal=}"; printf '%s' "\${kv#*=}" > "$d/files/\${kv%%=*}" ;;
    --from-file=*) kv="\${a#--from-file=}"; cat "\${kv#*=}" > "$d/files/\${kv%%=*}" ;;
  esac
done
`;
  for (const tool of ['kubectl', 'helm']) {
    writeFileSync(join(bin, tool), stub);
    chmodSync(join(bin, tool), 0o755);
  }
  const res = spawnSync('bash', ['-euo', 'pipefail', '-c', installBlock()], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  if (res.status !== 0) throw new Error(`the documented install failed (${res.status}):\n${res.stdout}\n${res.stderr}`);
  return readdirSync(out)
    .sort()
    .map((entry) => {
      const d = join(out, entry);
      const files: Record<string, string> = {};
      for (const f of readdirSync(join(d, 'files'))) files[f] = readFileSync(join(d, 'files', f), 'utf8');
      return { tool: entry.split('.')[0]!, args: readFileSync(join(d, 'args'), 'utf8').split('\0').slice(0, -1), files };
    });
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

t.test("docs/operations-kubernetes.md's production install: one command makes every secret the Deployment reads", async (t) => {
  const calls = runInstallBlock();
  const secrets = calls.filter((c) => c.tool === 'kubectl' && c.args.includes('secret'));
  const installs = calls.filter((c) => c.tool === 'helm');
  t.ok(installs.length >= 1, 'the block installs at least one release');
  t.equal(secrets.length, installs.length, 'one secret command per release');
  for (const install of installs) {
    const ns = flag(install.args, '-n') ?? flag(install.args, '--namespace');
    const valuesFiles = install.args.flatMap((a, i) => (a === '-f' || a === '--values' ? [join(REPO_ROOT, install.args[i + 1]!)] : []));
    const sets = install.args.flatMap((a, i) => (a === '--set' ? [install.args[i + 1]!] : []));
    t.ok(ns && valuesFiles.length > 0, `helm ${install.args.join(' ')}: a namespace and a values file`);
    const docs = await render(sets, valuesFiles, ns);
    const dep = one<IDeployment>(docs, 'Deployment');
    const pod = dep.spec!.template.spec!;
    const secretName = dep.spec!.template.spec!.containers[0]!.env!.find((e) => e.name === 'AUTHGATE_JWT_SECRET')!.valueFrom!.secretKeyRef!.name ?? '';
    const made = secrets.find((s) => flag(s.args, '-n') === ns);
    t.ok(made, `a secret is created in ${ns}`);
    if (!made) continue;
    t.ok(made.args.includes(secretName), `it is the Secret the Deployment reads (${secretName})`);
    t.equal(only(docs, 'Secret').length, 0, 'the chart itself renders no Secret: it is the one made by hand');

    // Every key the pods need: required env references, and the mounted identity key files.
    const needed = new Set<string>();
    for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref && ref.name === secretName && !ref.optional) needed.add(ref.key);
      }
    }
    for (const v of pod.volumes ?? []) {
      if (v.secret?.secretName === secretName) for (const item of v.secret?.items ?? []) needed.add(item.key);
    }
    t.ok(needed.has('identity-key.pem'), 'the identity key is among the keys the pods need');
    for (const key of needed) t.ok(key in made.files, `${ns}: the documented command makes ${key}`);
    // Optional to start, but without it production refuses TOTP enrolment (409, code 1228).
    t.ok('AUTHGATE_MFA_ENCRYPTION_KEY' in made.files, `${ns}: and the TOTP sealing key`);

    // And the whole set, with the rendered settings, is a config the gateway starts with.
    const cm = one(docs, 'ConfigMap', dep.metadata!.name).data as Record<string, string>;
    const keyDir = mkdtempSync(join(work, 'key-'));
    writeFileSync(join(keyDir, 'identity-key.pem'), made.files['identity-key.pem'] ?? '');
    const env: Record<string, string> = { ...cm, AUTHGATE_IDENTITY_KEY_FILE: join(keyDir, 'identity-key.pem') };
    for (const e of pod.containers[0]!.env ?? []) {
      const ref = e.valueFrom?.secretKeyRef;
      if (ref && made.files[ref.key] !== undefined) env[e.name] = made.files[ref.key]!;
    }
    t.doesNotThrow(() => loadConfig(env), `${ns}: the documented secrets and values make a valid config`);
  }
});

// ---------------------------------------------------------------------------------------------

t.test('the JWKS: on the public port by default, and reachable by the upstream through the production NetworkPolicy', async (t) => {
  const docs = await render([UPSTREAM]);
  t.equal(one(docs, 'ConfigMap', RELEASE).data.AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT, 'on', 'served on the public port by default');

  const prod = await render([], [join(CHART_DIR, 'values-production.yaml')]);
  const cm = one(prod, 'ConfigMap', RELEASE).data;
  t.equal(cm.AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT, 'on');
  const upstreamNs = new URL(cm.AUTHGATE_UPSTREAM_URL).hostname.split('.')[1];
  const np = one(prod, 'NetworkPolicy');
  const rules: any[] = np.spec.ingress;
  const peersOf = (port: number) => rules.filter((r) => r.ports.some((p: any) => p.port === port)).flatMap((r) => r.from ?? []);
  const nsOf = (peer: any) => peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'];
  t.ok(peersOf(8080).some((p) => nsOf(p) === upstreamNs && !p.podSelector), `the upstream's namespace (${upstreamNs}) may reach the public port`);
  t.notOk(peersOf(9090).some((p) => nsOf(p) === upstreamNs), 'but not the ops port, where the admin API is');
  t.same(peersOf(9090).map(nsOf), ['monitoring'], 'the ops port stays open only to whom the operator names');
});

t.test('Ingress and Gateway API HTTPRoute: off by default, to the public Service when on', async (t) => {
  const plain = await render([UPSTREAM]);
  t.equal(only(plain, 'Ingress').length, 0, 'no Ingress by default');
  t.equal(only(plain, 'HTTPRoute').length, 0, 'no HTTPRoute by default');
  const docs = await render([UPSTREAM], [
    valuesFile({
      ingress: {
        enabled: true,
        className: 'nginx',
        annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
        hosts: [{ host: 'api.example.test', paths: [{ path: '/', pathType: 'Prefix' }] }],
        tls: [{ secretName: 'api-tls', hosts: ['api.example.test'] }],
      },
      httpRoute: {
        enabled: true,
        parentRefs: [{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }],
        hostnames: ['api.example.test'],
      },
    }),
  ]);
  const svc = one(docs, 'Service', RELEASE);
  const ing = one(docs, 'Ingress');
  t.doesNotThrow(() => new Ingress(ing).validate(), 'the Ingress validates');
  t.equal(ing.spec.ingressClassName, 'nginx');
  t.equal(ing.metadata.annotations['cert-manager.io/cluster-issuer'], 'letsencrypt');
  t.same(ing.spec.tls, [{ secretName: 'api-tls', hosts: ['api.example.test'] }]);
  const backend = ing.spec.rules[0].http.paths[0].backend.service;
  t.same(backend, { name: svc.metadata.name, port: { name: 'http' } }, 'the Ingress sends to the public Service');
  t.ok(svc.spec.ports.some((p: any) => p.name === 'http'), 'which has that port');
  const route = one(docs, 'HTTPRoute');
  t.equal(route.apiVersion, 'gateway.networking.k8s.io/v1');
  t.same(route.spec.parentRefs, [{ name: 'public', namespace: 'gateway-system', sectionName: 'https' }]);
  t.same(route.spec.hostnames, ['api.example.test']);
  t.same(route.spec.rules[0].backendRefs, [{ name: svc.metadata.name, port: svc.spec.ports[0].port }], 'the route sends to the public Service');
  for (const doc of [ing, route]) t.notMatch(JSON.stringify(doc), /-ops|9090/, `${doc.kind} never exposes the ops port`);
  const bad = await helm(templateArgs({ release: RELEASE, namespace: NAMESPACE, set: [UPSTREAM, 'ingress.enabled=true'] }));
  t.not(bad.status, 0, 'an Ingress without hosts is refused');
});

const METRIC_NAMES = ['metrics.ts', 'route-metrics.ts'].flatMap((file) => [...readFileSync(join(REPO_ROOT, 'src', 'observability', file), 'utf8').matchAll(/name: '(authgate_[a-z_]+)'/g)].map((m) => m[1]!));

t.test('PrometheusRule: the alerts docs/operations-observability.md describes, valid for promtool', async (t) => {
  const plain = await render([UPSTREAM]);
  t.equal(only(plain, 'PrometheusRule').length, 0, 'none by default');
  const docs = await render([UPSTREAM, 'prometheusRule.enabled=true', 'prometheusRule.labels.release=kube-prometheus-stack']);
  const rule = one(docs, 'PrometheusRule');
  t.equal(rule.apiVersion, 'monitoring.coreos.com/v1');
  t.equal(rule.metadata.labels.release, 'kube-prometheus-stack', 'labelled for the Prometheus that selects rules');
  const alerts: any[] = rule.spec.groups.flatMap((g: any) => g.rules);
  t.ok(alerts.length >= 7, 'carries the alerts');
  for (const a of alerts) {
    t.ok(a.alert && a.expr && a.labels?.severity && a.annotations?.summary, `${a.alert}: name, expression, severity, summary`);
    const used = [...String(a.expr).matchAll(/\b(authgate_[a-z_]+?)(_bucket|_sum|_count)?\b/g)].map((m) => m[1]!);
    t.ok(used.length > 0, `${a.alert} queries a gateway metric`);
    for (const m of used) t.ok(METRIC_NAMES.includes(m), `${a.alert}: ${m} is a gateway metric`);
  }
  const exprs = alerts.map((a) => a.expr).join('\n');
  for (const m of [
    'authgate_store_up',
    'authgate_auth_decisions_total',
    'authgate_upstream_errors_total',
    'authgate_invalidations_received_total',
    'authgate_invalidation_subscribed',
    'authgate_revocation_propagation_seconds_bucket',
    'authgate_rate_limit_leases_total',
    'authgate_audit_write_failures_total',
    'authgate_routes_reloads_total',
    'authgate_routes_table_info',
  ]) {
    t.ok(exprs.includes(m), `an alert on ${m}, as docs/operations-observability.md describes`);
  }
  const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  if (promtool.error) {
    t.comment('promtool not installed (Debian: apt-get install prometheus): promtool check rules skipped');
    return;
  }
  const file = join(work, 'rules.yaml');
  writeFileSync(file, stringify({ groups: rule.spec.groups }));
  const check = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
  t.equal(check.status, 0, `promtool check rules passes\n${check.stdout}${check.stderr}`);
});

t.test('store.redis.username: the ACL user, in the ConfigMap', async (t) => {
  const docs = await render([UPSTREAM, 'store.type=redis', 'store.redis.clusterNodes={c:6379}', 'store.redis.username=authgate']);
  t.equal(one(docs, 'ConfigMap', RELEASE).data.AUTHGATE_REDIS_USERNAME, 'authgate');
  const none = await render([UPSTREAM, 'store.type=redis', 'store.redis.clusterNodes={c:6379}']);
  t.notOk('AUTHGATE_REDIS_USERNAME' in one(none, 'ConfigMap', RELEASE).data, 'not rendered when empty');
});

t.test('the init container checks the configuration with the same image, settings and files', async (t) => {
  for (const files of [[], [join(CHART_DIR, 'values-production.yaml')]]) {
    const docs = await render(files.length ? [] : [UPSTREAM], files);
    const pod = one<IDeployment>(docs, 'Deployment').spec!.template.spec!;
    const main = pod.containers[0]!;
    const init = (pod.initContainers ?? []).find((c) => c.name === 'config-check');
    t.ok(init, 'an init container config-check');
    if (!init) continue;
    t.same([...(init.command ?? []), ...(init.args ?? [])], ['node', 'dist/main.js', '--check'], 'runs node dist/main.js --check');
    t.equal(init.image, main.image, 'the same image');
    t.same(init.envFrom, main.envFrom, 'the same ConfigMap');
    t.same(init.env, main.env, 'the same environment from the Secret');
    t.same(init.volumeMounts, main.volumeMounts, 'the same files mounted');
    t.same(init.securityContext, main.securityContext, 'as hardened');
    t.equal(init.ports, undefined, 'listens on nothing');
  }
});

t.test('the chart README documents every top-level value', async (t) => {
  const readme = join(CHART_DIR, 'README.md');
  t.ok(existsSync(readme), 'charts/authgate/README.md exists');
  if (!existsSync(readme)) return;
  const text = readFileSync(readme, 'utf8');
  for (const v of ['config.upstreamUrl', 'existingSecret', 'ingress', 'httpRoute', 'prometheusRule', 'identity.jwksOnPublicPort', 'store.redis.username', 'routes.file', 'routes.check']) {
    t.ok(text.includes(v), `mentions ${v}`);
  }
});
