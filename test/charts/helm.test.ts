/**
 * The Helm chart (charts/authgate), checked with a real Helm 3 binary (see test/helpers/helm.ts):
 * lint and render every value set, validate every rendered object against the Kubernetes API
 * types (kubernetes-models, plus a check for unknown fields), and check what ties the objects
 * together: selectors, port names, probes, the shutdown timing, where secrets end up.
 */
import t from 'tap';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IService } from 'kubernetes-models/v1/Service';
import {
  CHART_DIR,
  getHelm,
  helm,
  renderChart as renderChartWithoutBase,
  templateArgs as templateArgsWithoutBase,
  unknownFields,
  type K8sObject,
  type RenderOptions,
} from '../helpers/helm.js';
import { identityKeyPem } from '../helpers/identity-key.js';
import { settings } from '../../src/config/settings.js';
import { loadConfig } from '../../src/config/load.js';
import { DEFAULT_TUNING } from '../../src/notices/delivery.js';

/** The notices' drain after the listeners close (src/notices/delivery.ts), in whole seconds. */
const NOTICES_DRAIN_S = Math.ceil(DEFAULT_TUNING.drainMs / 1000);

type Values = Record<string, any>;
type ValueSet = { name: string; files: string[] };

const NAMESPACE = 'authgate';
const RELEASE = 'authgate';

/*
 * config.upstreamUrl is required (the schema refuses an install without it, test/charts/install.test.ts):
 * every render here starts from a values file giving one, which any other file or --set overrides.
 */
const BASE_VALUES = join(mkdtempSync(join(tmpdir(), 'authgate-helm-base-')), 'base.yaml');
writeFileSync(BASE_VALUES, 'config:\n  upstreamUrl: http://upstream.test:8080\n');
t.teardown(() => rmSync(BASE_VALUES, { force: true }));
const withBase = (opts: RenderOptions): RenderOptions => ({ ...opts, valuesFiles: [BASE_VALUES, ...(opts.valuesFiles ?? [])] });
const renderChart = (opts: RenderOptions = {}) => renderChartWithoutBase(withBase(opts));
const templateArgs = (opts: RenderOptions = {}) => templateArgsWithoutBase(withBase(opts));

const VALUE_SETS: ValueSet[] = [
  { name: 'values.yaml', files: [BASE_VALUES] },
  { name: 'values-production.yaml', files: [join(CHART_DIR, 'values-production.yaml')] },
  { name: 'values-sandbox.yaml', files: [join(CHART_DIR, 'values-sandbox.yaml')] },
  ...readdirSync(join(CHART_DIR, 'ci'))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ name: `ci/${f}`, files: [join(CHART_DIR, 'ci', f)] })),
];

const METRICS = [
  'authgate_http_requests_total',
  'authgate_http_request_duration_seconds_bucket',
  'authgate_auth_decisions_total',
  'authgate_credential_cache_hits_total',
  'authgate_credential_cache_misses_total',
  'authgate_store_up',
  'authgate_invalidation_subscribed',
  'authgate_upstream_request_duration_seconds_bucket',
  'authgate_revocation_propagation_seconds_bucket',
  'authgate_audit_write_failures_total',
  'authgate_rate_limit_refusals_total',
  'authgate_rate_limit_leases_total',
  'authgate_fast_lane_requests_total',
];

const SECRET_ENV = [
  'AUTHGATE_JWT_SECRET',
  'AUTHGATE_JWT_PREVIOUS_SECRETS',
  'AUTHGATE_ADMIN_TOKEN',
  'AUTHGATE_REDIS_PASSWORD',
  'AUTHGATE_REDIS_SENTINEL_PASSWORD',
  'AUTHGATE_REDIS_URL',
];

const MODELS: Record<string, (obj: any) => { validate(): void }> = {
  'v1/ConfigMap': (o) => new ConfigMap(o),
  'v1/Secret': (o) => new Secret(o),
  'v1/Service': (o) => new Service(o),
  'v1/ServiceAccount': (o) => new ServiceAccount(o),
  'apps/v1/Deployment': (o) => new Deployment(o),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o),
  'autoscaling/v2/HorizontalPodAutoscaler': (o) => new HorizontalPodAutoscaler(o),
  'networking.k8s.io/v1/NetworkPolicy': (o) => new NetworkPolicy(o),
  'networking.k8s.io/v1/Ingress': (o) => new Ingress(o),
  'batch/v1/Job': (o) => new Job(o),
};

// ---------------------------------------------------------------------------------------------
// Helpers

/** values.yaml with the given files merged over it, the way Helm coalesces (maps merge, lists replace). */
function effectiveValues(files: string[]): Values {
  const merge = (base: any, over: any): any => {
    if (over === null || over === undefined) return base;
    if (typeof base !== 'object' || base === null || Array.isArray(base)) return over;
    if (typeof over !== 'object' || Array.isArray(over)) return over;
    const out: any = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = merge(base[k], v);
    return out;
  };
  let values: Values = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'));
  for (const f of files) values = merge(values, parse(readFileSync(f, 'utf8')) ?? {});
  return values;
}

function only(docs: K8sObject[], kind: string, name?: string): K8sObject[] {
  return docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
}

function one<T = K8sObject>(docs: K8sObject[], kind: string, name?: string): T {
  const found = only(docs, kind, name);
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0] as T;
}

function isSubset(sub: Record<string, string> | undefined, of: Record<string, string> | undefined): boolean {
  if (!sub || Object.keys(sub).length === 0) return false;
  return Object.entries(sub).every(([k, v]) => of?.[k] === v);
}

/** The container port a probe or Service targetPort refers to, by name or number. */
function containerPortOf(container: IContainer, port: string | number | undefined): number | undefined {
  const ports = container.ports ?? [];
  const match = typeof port === 'number' ? ports.find((p) => p.containerPort === port) : ports.find((p) => p.name === port);
  return match?.containerPort;
}

function quantity(q: string | number | undefined): number {
  if (q === undefined) return NaN;
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|k|M|G)?$/.exec(q);
  if (!m) return NaN;
  const scale: Record<string, number> = { m: 1e-3, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, k: 1e3, M: 1e6, G: 1e9 };
  return Number(m[1]) * (m[2] ? scale[m[2]]! : 1);
}

function deploymentOf(docs: K8sObject[]): { dep: IDeployment; container: IContainer } {
  const dep = one<IDeployment>(docs, 'Deployment');
  const containers = dep.spec?.template.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`expected one container, found ${containers.length}`);
  return { dep, container: containers[0]! };
}

/** Every secret value given in the values (the recognisable fakes in the ci files). */
function secretValues(values: Values): string[] {
  const s = values.secrets ?? {};
  const r = values.store?.redis ?? {};
  return [s.jwtSecret, s.adminToken, s.identityKey, ...(s.jwtPreviousSecrets ?? []), r.url, r.password, r.sentinelPassword].filter(
    (v): v is string => typeof v === 'string' && v.length > 0,
  );
}

/** ServiceMonitor has no kubernetes-models type: check it against the prometheus-operator v1 API by hand. */
function serviceMonitorProblems(sm: any): string[] {
  const problems: string[] = [];
  const allowed = (obj: any, keys: string[], path: string) => {
    for (const k of Object.keys(obj ?? {})) if (!keys.includes(k)) problems.push(`${path}.${k}: unknown field`);
  };
  allowed(sm, ['apiVersion', 'kind', 'metadata', 'spec'], 'ServiceMonitor');
  allowed(sm.metadata, ['name', 'namespace', 'labels', 'annotations'], 'metadata');
  const spec = sm.spec;
  if (typeof spec !== 'object' || spec === null) return [...problems, 'spec missing'];
  allowed(
    spec,
    ['jobLabel', 'targetLabels', 'podTargetLabels', 'endpoints', 'selector', 'namespaceSelector', 'sampleLimit', 'targetLimit', 'attachMetadata'],
    'spec',
  );
  if (typeof spec.selector !== 'object') problems.push('spec.selector missing');
  allowed(spec.selector, ['matchLabels', 'matchExpressions'], 'spec.selector');
  allowed(spec.namespaceSelector, ['any', 'matchNames'], 'spec.namespaceSelector');
  if (!Array.isArray(spec.endpoints) || spec.endpoints.length === 0) problems.push('spec.endpoints empty');
  for (const [i, ep] of (spec.endpoints ?? []).entries()) {
    allowed(
      ep,
      ['port', 'targetPort', 'path', 'scheme', 'params', 'interval', 'scrapeTimeout', 'honorLabels', 'honorTimestamps', 'relabelings', 'metricRelabelings', 'tlsConfig', 'authorization'],
      `spec.endpoints[${i}]`,
    );
    if (typeof ep.port !== 'string' || ep.port === '') problems.push(`spec.endpoints[${i}].port must name a Service port`);
    if (ep.scheme !== undefined && !['http', 'https'].includes(ep.scheme)) problems.push(`spec.endpoints[${i}].scheme`);
    for (const f of ['interval', 'scrapeTimeout']) {
      if (ep[f] !== undefined && !/^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$/.test(ep[f])) {
        problems.push(`spec.endpoints[${i}].${f}: not a Prometheus duration`);
      }
    }
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Render every value set once.

const renders = new Map<string, K8sObject[]>();

t.before(async () => {
  getHelm();
  await Promise.all(
    VALUE_SETS.map(async (vs) => {
      renders.set(vs.name, await renderChart({ release: RELEASE, namespace: NAMESPACE, valuesFiles: vs.files }));
    }),
  );
});

t.test('helm lint --strict passes for every value set', async (t) => {
  await Promise.all(
    VALUE_SETS.map(async (vs) => {
      const args = ['lint', '--strict', CHART_DIR, '--namespace', NAMESPACE];
      for (const f of vs.files) args.push('--values', f);
      const res = await helm(args);
      t.equal(res.status, 0, `${vs.name}: lint exits 0\n${res.stdout}${res.stderr}`);
      t.notMatch(res.stdout, /\[(WARNING|ERROR)\]/, `${vs.name}: no lint warnings`);
    }),
  );
});

t.test('the ci value sets turn on every optional object', async (t) => {
  const ci = VALUE_SETS.filter((vs) => vs.name.startsWith('ci/'));
  const kinds = new Set(ci.flatMap((vs) => renders.get(vs.name)!.map((d) => d.kind)));
  for (const kind of ['HorizontalPodAutoscaler', 'ServiceMonitor', 'NetworkPolicy', 'PodDisruptionBudget', 'Secret', 'ServiceAccount', 'Ingress', 'HTTPRoute', 'PrometheusRule']) {
    t.ok(kinds.has(kind), `some ci set renders a ${kind}`);
  }
  const values = ci.map((vs) => effectiveValues(vs.files));
  t.ok(values.some((v) => v.dashboard.enabled), 'a ci set enables the dashboard');
  t.ok(values.some((v) => v.existingSecret), 'a ci set uses existingSecret');
  t.ok(values.some((v) => v.store.type === 'redis' && v.store.redis.sentinels.length > 0), 'a ci set uses Sentinel');
  t.ok(values.some((v) => v.store.type === 'redis' && v.store.redis.clusterNodes.length > 0), 'a ci set uses Redis Cluster');
  t.ok(values.some((v) => v.store.type === 'redis' && v.store.redis.url), 'a ci set uses a Redis URL');
});

for (const vs of VALUE_SETS) {
  t.test(`rendered with ${vs.name}`, async (t) => {
    const docs = renders.get(vs.name)!;
    const values = effectiveValues(vs.files);
    const fullname = `${RELEASE}`; // the release name contains "authgate", so it is the full name
    const opsName = `${fullname}-ops`;

    t.test('every object validates against its API type, with no unknown fields', async (t) => {
      t.ok(docs.length >= 5, 'renders objects');
      const seen = new Set<string>();
      for (const doc of docs) {
        const id = `${doc.kind}/${doc.metadata?.name}`;
        t.ok(doc.apiVersion && doc.kind && doc.metadata?.name, `${id} has apiVersion, kind, metadata.name`);
        t.notOk(seen.has(id), `${id} is rendered once`);
        seen.add(id);
        const labels = doc.metadata.labels ?? {};
        t.equal(labels['app.kubernetes.io/name'], 'authgate', `${id} has the name label`);
        t.equal(labels['app.kubernetes.io/instance'], RELEASE, `${id} has the instance label`);
        t.equal(labels['app.kubernetes.io/managed-by'], 'Helm', `${id} has the managed-by label`);
        const key = `${doc.apiVersion}/${doc.kind}`;
        if (key === 'monitoring.coreos.com/v1/ServiceMonitor') {
          t.same(serviceMonitorProblems(doc), [], `${id} has the ServiceMonitor shape`);
          continue;
        }
        // No kubernetes-models types for these: test/charts/install.test.ts checks their shape (promtool for the rules).
        if (key === 'monitoring.coreos.com/v1/PrometheusRule' || key === 'gateway.networking.k8s.io/v1/HTTPRoute') continue;
        const model = MODELS[key];
        if (!model) {
          t.fail(`${id}: no model for ${key}`);
          continue;
        }
        t.doesNotThrow(() => model(doc).validate(), `${id} validates`);
        t.same(unknownFields(doc), [], `${id} has no unknown fields`);
      }
      const expectedNs = (d: K8sObject) =>
        d.kind === 'ConfigMap' && d.metadata.name.endsWith('-dashboard') && values.dashboard.namespace
          ? values.dashboard.namespace
          : NAMESPACE;
      for (const d of docs) t.equal(d.metadata.namespace, expectedNs(d), `${d.kind}/${d.metadata.name} namespace`);
    });

    t.test('names, labels and selectors agree', async (t) => {
      const { dep, container } = deploymentOf(docs);
      const podLabels = dep.spec!.template.metadata!.labels!;
      const selector = dep.spec!.selector.matchLabels!;
      t.equal(dep.metadata!.name, fullname);
      t.ok(isSubset(selector, podLabels), 'the Deployment selects its own pods');

      const pub = one<IService>(docs, 'Service', fullname);
      const ops = one<IService>(docs, 'Service', opsName);
      // With authz.enabled a third: the edge proxies' authz Service (test/charts/authz.test.ts).
      const authz = values.authz?.enabled === true ? [one<IService>(docs, 'Service', `${fullname}-authz`)] : [];
      t.equal(only(docs, 'Service').length, 2 + authz.length, 'two Services: public and ops (and authz when enabled)');
      for (const svc of [pub, ops, ...authz]) {
        t.same(svc.spec!.selector, selector, `${svc.metadata!.name} selects the Deployment's pods`);
        t.ok(isSubset(svc.spec!.selector, podLabels), `${svc.metadata!.name} selector matches pod labels`);
      }
      t.equal(pub.spec!.ports!.length, 1, 'the public Service has one port');
      t.equal(containerPortOf(container, pub.spec!.ports![0]!.targetPort), values.ports.http, 'public Service → http port');
      t.equal(ops.spec!.ports!.length, 1, 'the ops Service has one port');
      t.equal(ops.spec!.ports![0]!.name, 'ops');
      t.equal(containerPortOf(container, ops.spec!.ports![0]!.targetPort), values.ports.ops, 'ops Service → ops port');
      t.equal(ops.spec!.type, 'ClusterIP', 'the ops Service stays inside the cluster');

      const cm = one(docs, 'ConfigMap', fullname);
      t.same(container.envFrom, [{ configMapRef: { name: cm.metadata.name } }], 'env from the settings ConfigMap');

      const pdbs = only(docs, 'PodDisruptionBudget');
      t.equal(pdbs.length, values.podDisruptionBudget.enabled ? 1 : 0, 'PDB iff enabled');
      for (const pdb of pdbs) {
        t.same((pdb as any).spec.selector.matchLabels, selector, 'the PDB selects the pods');
        const spec = (pdb as any).spec;
        t.ok((spec.minAvailable === undefined) !== (spec.maxUnavailable === undefined), 'PDB sets exactly one of minAvailable/maxUnavailable');
      }

      const hpas = only(docs, 'HorizontalPodAutoscaler');
      t.equal(hpas.length, values.autoscaling.enabled ? 1 : 0, 'HPA iff enabled');
      for (const hpa of hpas) {
        t.same((hpa as any).spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: fullname });
        t.equal(dep.spec!.replicas, undefined, 'with an HPA the Deployment leaves replicas to it');
      }
      if (!values.autoscaling.enabled) t.equal(dep.spec!.replicas, values.replicaCount, 'replicas from replicaCount');

      const sa = values.serviceAccount.create ? one(docs, 'ServiceAccount') : undefined;
      t.equal(dep.spec!.template.spec!.serviceAccountName, sa ? sa.metadata.name : 'default', 'service account');

      for (const tsc of dep.spec!.template.spec!.topologySpreadConstraints ?? []) {
        t.ok(isSubset(tsc.labelSelector?.matchLabels, podLabels), `spread over ${tsc.topologyKey} counts this release's pods`);
      }
      t.ok((dep.spec!.template.spec!.topologySpreadConstraints ?? []).length > 0, 'has topology spread constraints');

      const sms = only(docs, 'ServiceMonitor');
      t.equal(sms.length, values.serviceMonitor.enabled ? 1 : 0, 'ServiceMonitor iff enabled');
      for (const sm of sms as any[]) {
        t.ok(isSubset(sm.spec.selector.matchLabels, ops.metadata!.labels), 'the ServiceMonitor selects the ops Service');
        t.notOk(isSubset(sm.spec.selector.matchLabels, pub.metadata!.labels), 'and not the public Service');
        t.same(sm.spec.namespaceSelector, { matchNames: [NAMESPACE] });
        for (const ep of sm.spec.endpoints) {
          t.ok(ops.spec!.ports!.some((p) => p.name === ep.port), `endpoint port ${ep.port} is a port name of the ops Service`);
          t.equal(ep.path, '/metrics');
        }
        for (const [k, v] of Object.entries(values.serviceMonitor.labels)) t.equal(sm.metadata.labels[k], v, `label ${k}`);
      }

      const nps = only(docs, 'NetworkPolicy');
      t.equal(nps.length, values.networkPolicy.enabled ? 1 : 0, 'NetworkPolicy iff enabled');
      for (const np of nps as any[]) {
        t.same(np.spec.podSelector.matchLabels, selector, 'the NetworkPolicy applies to the pods');
        t.same(np.spec.policyTypes, ['Ingress']);
        const rules: any[] = np.spec.ingress;
        const rulesFor = (port: number) => rules.filter((r) => r.ports.some((p: any) => p.port === port));
        const pubRules = rulesFor(values.ports.http);
        t.equal(pubRules.length, 1, 'one rule opens the public port');
        if (values.networkPolicy.public.from.length === 0) t.equal(pubRules[0].from, undefined, 'public port from anywhere');
        else t.same(pubRules[0].from, values.networkPolicy.public.from, 'public port from the configured peers');
        const opsRules = rulesFor(values.ports.ops);
        const o = values.networkPolicy.ops;
        const peers = o.namespaces.length + o.podSelectors.length + o.from.length;
        if (peers === 0) t.equal(opsRules.length, 0, 'nothing may reach the ops port');
        else {
          t.equal(opsRules.length, 1, 'one rule opens the ops port');
          t.equal(opsRules[0].ports.length, 1, 'the ops rule opens only the ops port');
          t.equal(opsRules[0].from.length, peers, 'the ops rule has exactly the configured peers');
          for (const ns of o.namespaces) {
            t.ok(
              opsRules[0].from.some((p: any) => p.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === ns && !p.podSelector),
              `namespace ${ns} may reach the ops port`,
            );
          }
        }
        t.ok(rules.every((r) => r.from === undefined || r.from.length > 0), 'no rule with an empty from (that would mean anywhere)');
        t.ok(!opsRules.some((r) => r.from === undefined), 'the ops port is never open to anywhere');
      }

      const dashboards = only(docs, 'ConfigMap').filter((d) => d.metadata.name === `${fullname}-dashboard`);
      t.equal(dashboards.length, values.dashboard.enabled ? 1 : 0, 'dashboard ConfigMap iff enabled');
      for (const d of dashboards as any[]) {
        t.equal(d.metadata.labels.grafana_dashboard, '1', 'labelled for the Grafana sidecar');
        const json = d.data['authgate.json'];
        t.same(JSON.parse(json), JSON.parse(readFileSync(join(CHART_DIR, 'dashboards', 'authgate.json'), 'utf8')), 'carries dashboards/authgate.json');
      }
    });

    t.test('probes, shutdown timing and hardening', async (t) => {
      const { dep, container } = deploymentOf(docs);
      const pod = dep.spec!.template.spec!;
      const cm: any = one(docs, 'ConfigMap', fullname);
      const opsPort = Number(cm.data.AUTHGATE_OPS_PORT);
      t.equal(opsPort, values.ports.ops, 'AUTHGATE_OPS_PORT is the ops port');
      t.equal(Number(cm.data.AUTHGATE_PORT), values.ports.http, 'AUTHGATE_PORT is the http port');
      t.not(opsPort, Number(cm.data.AUTHGATE_PORT), 'the ports differ');
      const probes = { livenessProbe: '/livez', readinessProbe: '/readyz', startupProbe: '/livez' } as const;
      for (const [probe, path] of Object.entries(probes) as [keyof typeof probes, string][]) {
        const get = container[probe]?.httpGet;
        t.equal(get?.path, path, `${probe} on ${path}`);
        t.equal(containerPortOf(container, get?.port), opsPort, `${probe} on the ops container port`);
      }

      const delay = Number(cm.data.AUTHGATE_SHUTDOWN_DELAY_SECONDS);
      const grace = Number(cm.data.AUTHGATE_SHUTDOWN_GRACE_SECONDS);
      t.equal(delay, values.config.shutdownDelaySeconds, 'AUTHGATE_SHUTDOWN_DELAY_SECONDS from values');
      t.equal(grace, values.config.shutdownGraceSeconds, 'AUTHGATE_SHUTDOWN_GRACE_SECONDS from values');
      const command = container.lifecycle?.preStop?.exec?.command ?? [];
      t.match(command[0], /(^|\/)sleep$/, 'preStop runs sleep');
      t.equal(command.length, 2);
      t.equal(Number(command[1]), delay, 'the preStop sleep equals the shutdown delay');
      const tgps = pod.terminationGracePeriodSeconds!;
      t.ok(tgps > delay + grace, `terminationGracePeriodSeconds ${tgps} > delay ${delay} + grace ${grace}`);
      t.ok(tgps > 2 * delay + grace, 'and covers the preStop sleep as well (the countdown includes it)');
      // After the listeners close, the security notices still queued get up to 5 s (drainMs).
      t.ok(tgps >= 2 * delay + grace + NOTICES_DRAIN_S + 5, `and the notices' ${NOTICES_DRAIN_S} s drain, with 5 s of slack`);

      const psc = pod.securityContext!;
      const csc = container.securityContext!;
      t.equal(csc.runAsNonRoot ?? psc.runAsNonRoot, true, 'runAsNonRoot');
      t.equal(csc.runAsUser ?? psc.runAsUser, 10001, 'runAsUser 10001');
      t.equal(csc.readOnlyRootFilesystem, true, 'readOnlyRootFilesystem');
      t.equal(csc.allowPrivilegeEscalation, false, 'allowPrivilegeEscalation false');
      t.same(csc.capabilities?.drop, ['ALL'], 'drops ALL capabilities');
      t.notOk(csc.capabilities?.add, 'adds none');
      t.equal((csc.seccompProfile ?? psc.seccompProfile)?.type, 'RuntimeDefault', 'seccomp RuntimeDefault');
      t.equal(pod.enableServiceLinks, false, 'no service-link variables (they would collide with AUTHGATE_PORT)');
      t.equal(pod.automountServiceAccountToken, false, 'no API token in the pod');

      const tmpMount = container.volumeMounts?.find((m) => m.mountPath === '/tmp');
      t.ok(tmpMount, '/tmp is mounted');
      t.ok(pod.volumes?.find((v) => v.name === tmpMount?.name)?.emptyDir, '/tmp is an emptyDir');
      t.ok(container.resources?.requests?.cpu && container.resources?.requests?.memory, 'requests cpu and memory');
      t.ok(container.resources?.limits?.memory, 'limits memory');

      const annotations = dep.spec!.template.metadata!.annotations ?? {};
      t.match(annotations['checksum/config'], /^[0-9a-f]{64}$/, 'config checksum annotation');
      if (values.existingSecret) t.notOk(annotations['checksum/secret'], 'no secret checksum for an existing Secret');
      else t.match(annotations['checksum/secret'], /^[0-9a-f]{64}$/, 'secret checksum annotation');
      t.equal(cm.data.NODE_ENV, 'production');
      t.equal(cm.data.AUTHGATE_ENVIRONMENT, values.environment);
      t.equal(cm.data.AUTHGATE_STORE, values.store.type);
    });

    t.test('secrets stay in the Secret', async (t) => {
      const { container } = deploymentOf(docs);
      const secretName = values.existingSecret || fullname;
      const secrets = only(docs, 'Secret');
      if (values.existingSecret) t.equal(secrets.length, 0, 'no Secret rendered with existingSecret');
      else t.same(secrets.map((s) => s.metadata.name), [fullname], 'the chart renders its Secret');

      const env = container.env ?? [];
      for (const e of env) t.notOk(SECRET_ENV.includes(e.name) && e.value !== undefined, `${e.name} is not a literal value`);
      for (const name of ['AUTHGATE_JWT_SECRET', 'AUTHGATE_ADMIN_TOKEN']) {
        const ref = env.find((e) => e.name === name)?.valueFrom?.secretKeyRef;
        t.same(ref && { name: ref.name, key: ref.key, optional: ref.optional }, { name: secretName, key: name, optional: undefined }, `${name} from the Secret, required`);
      }
      for (const e of env.filter((e) => e.valueFrom?.secretKeyRef)) {
        t.equal(e.valueFrom!.secretKeyRef!.name, secretName, `${e.name} from Secret ${secretName}`);
      }
      if (values.store.type === 'redis') {
        t.ok(env.some((e) => e.name === 'AUTHGATE_REDIS_URL' && e.valueFrom?.secretKeyRef), 'the Redis URL comes from the Secret');
      }

      for (const cm of only(docs, 'ConfigMap') as any[]) {
        for (const key of SECRET_ENV) t.notOk(key in (cm.data ?? {}), `${cm.metadata.name} has no ${key}`);
      }

      const fakes = secretValues(values);
      if (vs.name.startsWith('ci/') && !values.existingSecret) t.ok(fakes.length >= 2, 'this value set carries fake secrets');
      const secretData: Record<string, string> = {};
      for (const s of secrets as any[]) {
        for (const [k, v] of Object.entries<string>(s.data ?? {})) secretData[k] = Buffer.from(v, 'base64').toString('utf8');
      }
      for (const fake of fakes) {
        const forms = [fake, Buffer.from(fake).toString('base64')];
        for (const doc of docs.filter((d) => d.kind !== 'Secret')) {
          const text = JSON.stringify(doc);
          t.notOk(forms.some((f) => text.includes(f)), `${doc.kind}/${doc.metadata.name} does not contain a secret value`);
        }
        t.ok(Object.values(secretData).some((v) => v.split(',').includes(fake)), 'the secret value is in the Secret');
      }
      if (!values.existingSecret) {
        t.ok(secretData.AUTHGATE_JWT_SECRET && Buffer.byteLength(secretData.AUTHGATE_JWT_SECRET) >= 32, 'JWT secret of at least 32 bytes');
        t.ok(secretData.AUTHGATE_ADMIN_TOKEN, 'admin token present');
      }
    });

    t.test('every AUTHGATE_* the chart sets is a setting of the gateway', async (t) => {
      const { container } = deploymentOf(docs);
      const cm: any = one(docs, 'ConfigMap', fullname);
      const known = new Set<string>(settings.map((s) => s.name));
      const extra = new Set((values.extraEnv ?? []).map((e: { name: string }) => e.name));
      const names = [...Object.keys(cm.data ?? {}), ...(container.env ?? []).map((e) => e.name).filter((n) => !extra.has(n))];
      t.ok(names.length > 10, 'the chart sets settings');
      for (const name of names.filter((n) => n.startsWith('AUTHGATE_'))) t.ok(known.has(name), `${name} is in src/config/settings.ts`);
    });

    t.test('the identity signing key: from the Secret, mounted read-only, named in the settings', async (t) => {
      const { dep, container } = deploymentOf(docs);
      const cm: any = one(docs, 'ConfigMap', fullname);
      const secretName = values.existingSecret || fullname;
      const volume = (dep.spec!.template.spec!.volumes ?? []).find((v) => v.name === 'identity-keys');
      const mount = (container.volumeMounts ?? []).find((m) => m.name === 'identity-keys');
      const identitySettings = Object.keys(cm.data).filter((k) => k.startsWith('AUTHGATE_IDENTITY_'));
      const secret: any = values.existingSecret ? undefined : one(docs, 'Secret', fullname);
      const pemKeys = Object.keys(secret?.data ?? {}).filter((k) => k.endsWith('.pem'));
      if (!values.identity.enabled) {
        t.equal(cm.data.AUTHGATE_IDENTITY_ASSERTION, 'off', 'AUTHGATE_IDENTITY_ASSERTION=off');
        t.same(identitySettings, ['AUTHGATE_IDENTITY_ASSERTION'], 'and no other identity setting (the gateway refuses them while off)');
        t.notOk(volume, 'no key volume');
        t.notOk(mount, 'nothing mounted');
        t.same(pemKeys, [], 'no key in the Secret');
        return;
      }
      t.equal(cm.data.AUTHGATE_IDENTITY_ASSERTION, 'on', 'AUTHGATE_IDENTITY_ASSERTION=on');
      t.ok(mount?.readOnly, 'the keys are mounted read-only');
      t.equal(volume?.secret?.secretName, secretName, `from Secret ${secretName}`);
      t.equal((volume?.secret?.defaultMode ?? 0o644) & 0o007, 0, 'not readable by others');
      const items = volume?.secret?.items ?? [];
      const fileOf = (key: string) => {
        const item = items.find((i) => i.key === key);
        return item && `${mount?.mountPath}/${item.path}`;
      };
      t.ok(fileOf('identity-key.pem'), 'identity-key.pem is projected');
      t.equal(cm.data.AUTHGATE_IDENTITY_KEY_FILE, fileOf('identity-key.pem'), 'AUTHGATE_IDENTITY_KEY_FILE is the mounted file');
      const published = values.existingSecret ? values.identity.existingSecretPublishedKeys : values.secrets.identityPublishedKeys.length;
      const files: string[] = (cm.data.AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES ?? '').split(',').filter(Boolean);
      t.equal(files.length, published, `${published} published key file(s)`);
      t.same(files, Array.from({ length: published }, (_, i) => fileOf(`identity-published-${i}.pem`)), 'each one mounted from identity-published-<n>.pem');
      t.equal(items.length, 1 + published, 'nothing else of the Secret is projected');
      t.equal(cm.data.AUTHGATE_IDENTITY_AUDIENCE, values.identity.audience || undefined, 'audience');
      t.equal(cm.data.AUTHGATE_IDENTITY_TTL_SECONDS, values.identity.ttlSeconds ? String(values.identity.ttlSeconds) : undefined, 'lifetime');
      t.equal(cm.data.AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT, values.identity.jwksOnPublicPort ? 'on' : 'off', 'JWKS on the public port');
      if (!secret) return;
      const data = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString('utf8');
      const key = createPrivateKey(data('identity-key.pem'));
      if (values.secrets.identityKey) t.equal(data('identity-key.pem'), values.secrets.identityKey, 'the given key');
      else t.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1', 'a generated P-256 key');
      values.secrets.identityPublishedKeys.forEach((pem: string, i: number) => {
        t.equal(data(`identity-published-${i}.pem`), pem, `published key ${i} as given`);
        t.doesNotThrow(() => createPublicKey(pem), `published key ${i} is a public key`);
      });
      t.same(pemKeys.sort(), ['identity-key.pem', ...values.secrets.identityPublishedKeys.map((_: string, i: number) => `identity-published-${i}.pem`)].sort(), 'no other key file');
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Behaviour across renders

const FAKE_JWT = 'FAKE-JWT-SECRET-test-0123456789abcdef0123456789abcdef';

/** A values file (for what --set cannot carry, such as a PEM), removed after the tests. */
const valuesDir = mkdtempSync(join(tmpdir(), 'authgate-helm-values-'));
t.teardown(() => rmSync(valuesDir, { recursive: true, force: true }));
let valuesFiles = 0;
function valuesFile(values: Values): string {
  const path = join(valuesDir, `values-${valuesFiles++}.yaml`);
  writeFileSync(path, stringify(values));
  return path;
}
/** A fixed identity key, so that renders compare equal (an empty one is generated anew on each render). */
const IDENTITY_KEY = valuesFile({ secrets: { identityKey: identityKeyPem() } });

async function templateFails(set: string[], files: string[] = []): Promise<string> {
  const opts: RenderOptions = { release: RELEASE, namespace: NAMESPACE, set, valuesFiles: files };
  const res = await helm(templateArgs(opts));
  if (res.status === 0) throw new Error(`helm template ${set.join(' ')} succeeded`);
  return res.stderr;
}

t.test('the schema rejects bad values', async (t) => {
  const cases: [string, string[]][] = [
    ['an unknown environment', ['environment=staging']],
    ['a string replicaCount', ['replicaCount=two']],
    ['an unknown top-level key', ['replicas=3']],
    ['an unknown nested key', ['config.upstreamURL=http://x']],
    ['an unknown store', ['store.type=postgres']],
    ['a JWT secret under 32 bytes', ['secrets.jwtSecret=too-short']],
    ['an admin token under 16 characters', ['secrets.adminToken=short']],
    ['a token lifetime under a second', ['config.tokenTtlSeconds=0']],
    ['a Redis TLS server name that is no host name', ['store.redis.tls.serverName=redis internal']],
    ['an unknown Redis TLS key', ['store.redis.tls.verify=false']],
    ['a malformed sentinel address', ['store.type=redis', 'store.redis.sentinels={sentinel-0}', 'store.redis.sentinelName=m']],
    ['a non-URL upstream', ['config.upstreamUrl=upstream:8080']],
    ['an unknown log level', ['config.logLevel=verbose']],
    ['port 0', ['ports.ops=0']],
    ['a negative trustProxy hop count', ['config.trustProxy=-1']],
    ['an identity lifetime under 10 seconds', ['identity.ttlSeconds=5']],
    ['an identity lifetime over an hour', ['identity.ttlSeconds=3601']],
    ['a string identity.enabled', ['identity.enabled=maybe']],
    ['an unknown identity key', ['identity.keyFile=/k.pem']],
    ['an identity key that is no PEM or JWK', ['secrets.identityKey=not-a-key']],
    ['a published key that is no public PEM or JWK', ['secrets.identityPublishedKeys={not-a-key}']],
  ];
  await Promise.all(
    cases.map(async ([what, set]) => {
      const stderr = await templateFails(set);
      t.match(stderr, /values don't meet the specifications of the schema/, `rejects ${what}`);
    }),
  );
  const lint = await helm(['lint', '--strict', CHART_DIR, '--set', 'environment=staging']);
  t.not(lint.status, 0, 'helm lint fails on a schema violation too');
});

t.test('the chart refuses inconsistent values', async (t) => {
  const cases: [string, string[], RegExp][] = [
    ['several replicas on the memory store', ['replicaCount=3'], /store\.type=memory/],
    ['autoscaling on the memory store', ['autoscaling.enabled=true'], /store\.type=memory/],
    ['redis without an address', ['store.type=redis'], /store\.redis\.url/],
    ['sentinels without a name', ['store.type=redis', 'store.redis.sentinels={s:26379}'], /sentinelName/],
    ['sentinels and cluster nodes', ['store.type=redis', 'store.redis.sentinels={s:26379}', 'store.redis.sentinelName=m', 'store.redis.clusterNodes={c:6379}'], /exactly one/],
    ['a URL and sentinels', ['store.type=redis', 'store.redis.url=redis://r:6379', 'store.redis.sentinels={s:26379}', 'store.redis.sentinelName=m'], /exactly one/],
    ['existingSecret and a secret value', ['existingSecret=mine', `secrets.jwtSecret=${FAKE_JWT}`], /existingSecret is set/],
    ['existingSecret and a Sentinel password', ['existingSecret=mine', 'store.type=redis', 'store.redis.sentinels={s:26379}', 'store.redis.sentinelName=m', 'store.redis.sentinelPassword=x'], /existingSecret is set/],
    ['a Sentinel password without Sentinels', ['store.type=redis', 'store.redis.clusterNodes={c:6379}', 'store.redis.sentinelPassword=x'], /need store\.redis\.sentinels/],
    ['Redis TLS on with a redis:// url', ['store.type=redis', 'store.redis.url=redis://r:6379', 'store.redis.tls.enabled=true'], /use rediss/],
    ['a Redis CA with TLS off', ['store.type=redis', 'store.redis.clusterNodes={c:6379}', 'store.redis.tls.ca.secretName=ca'], /need store\.redis\.tls\.enabled/],
    ['a Redis CA from two places', ['store.type=redis', 'store.redis.clusterNodes={c:6379}', 'store.redis.tls.enabled=true', 'store.redis.tls.ca.secretName=ca', 'store.redis.tls.ca.configMapName=ca'], /not both/],
    ['the same port twice', ['ports.ops=8080'], /must differ/],
    ['a published-key count without existingSecret', ['identity.existingSecretPublishedKeys=1'], /existingSecretPublishedKeys counts keys in existingSecret/],
    ['identity off with an audience', ['identity.enabled=false', 'identity.audience=https://api.internal'], /identity\.enabled=false/],
    ['identity off with a lifetime', ['identity.enabled=false', 'identity.ttlSeconds=60'], /identity\.enabled=false/],
  ];
  await Promise.all(
    cases.map(async ([what, set, message]) => {
      const stderr = await templateFails(set);
      t.match(stderr, message, `refuses ${what}`);
    }),
  );
  const withKey = await templateFails(['existingSecret=mine'], [IDENTITY_KEY]);
  t.match(withKey, /identity keys in that Secret/, 'refuses existingSecret and secrets.identityKey');
  const offWithKey = await templateFails(['identity.enabled=false'], [IDENTITY_KEY]);
  t.match(offWithKey, /identity\.enabled=false/, 'refuses identity off with secrets.identityKey');
  const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const withPublished = await templateFails(['existingSecret=mine'], [valuesFile({ secrets: { identityPublishedKeys: [publicKey] } })]);
  t.match(withPublished, /identity keys in that Secret/, 'refuses existingSecret and secrets.identityPublishedKeys');
  const refused = [withKey, offWithKey].join('\n');
  t.notMatch(refused, /BEGIN PRIVATE KEY|END PRIVATE KEY/, 'the key is not quoted in the refusal');
});

t.test('the identity signing key: generated once as P-256, or given, and mounted', async (t) => {
  const render = (set: string[] = [], files: string[] = []) => renderChart({ release: RELEASE, namespace: NAMESPACE, set, valuesFiles: files });
  const keyIn = (docs: K8sObject[]) => Buffer.from((one<any>(docs, 'Secret').data ?? {})['identity-key.pem'] ?? '', 'base64').toString('utf8');

  const generated = await render();
  const pem = keyIn(generated);
  t.match(pem, /^-----BEGIN (EC )?PRIVATE KEY-----\n/, 'a PEM private key in the Secret');
  const key = createPrivateKey(pem);
  t.equal(key.type, 'private');
  t.equal(key.asymmetricKeyType, 'ec');
  t.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1', 'on P-256 (ES256)');
  const secretTemplate = readFileSync(join(CHART_DIR, 'templates', 'secret.yaml'), 'utf8');
  t.match(secretTemplate, /hasKey \$current "identity-key\.pem"/, 'kept across upgrades: read back from the cluster (lookup) before generating');
  t.match(secretTemplate, /genPrivateKey "ecdsa"/, 'generated only when neither given nor already there');

  const cm = one<any>(generated, 'ConfigMap');
  const { dep, container } = deploymentOf(generated);
  t.equal(cm.data.AUTHGATE_IDENTITY_ASSERTION, 'on', 'on by default');
  t.equal(cm.data.AUTHGATE_IDENTITY_KEY_FILE, '/etc/authgate/identity/identity-key.pem');
  t.notOk('AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES' in cm.data, 'no published keys by default');
  t.same(container.volumeMounts!.find((m) => m.name === 'identity-keys'), { name: 'identity-keys', mountPath: '/etc/authgate/identity', readOnly: true });
  t.same(dep.spec!.template.spec!.volumes!.find((v) => v.name === 'identity-keys')?.secret, {
    secretName: RELEASE,
    defaultMode: 0o440,
    items: [{ key: 'identity-key.pem', path: 'identity-key.pem' }],
  }, 'only the key is projected from the Secret');
  t.notOk((container.env ?? []).some((e) => e.name.startsWith('AUTHGATE_IDENTITY_')), 'the key is a file, never in the environment');
  for (const doc of generated.filter((d) => d.kind !== 'Secret')) {
    t.notOk(JSON.stringify(doc).includes(pem.split('\n')[1]!), `${doc.kind}/${doc.metadata.name} does not carry the key`);
  }

  const ownPem = identityKeyPem();
  const own = await render([], [valuesFile({ secrets: { identityKey: ownPem } })]);
  t.equal(keyIn(own), ownPem, 'a given secrets.identityKey is used verbatim');
  const ed = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  t.equal(keyIn(await render([], [valuesFile({ secrets: { identityKey: ed } })])), ed, 'an Ed25519 key too');

  const next = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
  const previous = JSON.stringify(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }));
  const rotating = await render(['identity.audience=https://api.internal', 'identity.ttlSeconds=300', 'identity.jwksOnPublicPort=true'], [IDENTITY_KEY, valuesFile({ secrets: { identityPublishedKeys: [next, previous] } })]);
  const rcm = one<any>(rotating, 'ConfigMap');
  t.equal(rcm.data.AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES, '/etc/authgate/identity/published-0.pem,/etc/authgate/identity/published-1.pem');
  t.equal(rcm.data.AUTHGATE_IDENTITY_AUDIENCE, 'https://api.internal');
  t.equal(rcm.data.AUTHGATE_IDENTITY_TTL_SECONDS, '300');
  t.equal(rcm.data.AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT, 'on');
  const rsecret = one<any>(rotating, 'Secret');
  t.equal(Buffer.from(rsecret.data['identity-published-0.pem'], 'base64').toString(), next, 'the next key, as given');
  t.equal(Buffer.from(rsecret.data['identity-published-1.pem'], 'base64').toString(), previous, 'the previous key (a JWK), as given');
  t.same(deploymentOf(rotating).dep.spec!.template.spec!.volumes!.find((v) => v.name === 'identity-keys')?.secret?.items, [
    { key: 'identity-key.pem', path: 'identity-key.pem' },
    { key: 'identity-published-0.pem', path: 'published-0.pem' },
    { key: 'identity-published-1.pem', path: 'published-1.pem' },
  ]);

  const off = await render(['identity.enabled=false']);
  const offCm = one<any>(off, 'ConfigMap');
  t.equal(offCm.data.AUTHGATE_IDENTITY_ASSERTION, 'off', 'identity.enabled=false: AUTHGATE_IDENTITY_ASSERTION=off');
  t.same(Object.keys(offCm.data).filter((k) => k.startsWith('AUTHGATE_IDENTITY_')), ['AUTHGATE_IDENTITY_ASSERTION'], 'no key file named');
  const offDep = deploymentOf(off);
  t.notOk(offDep.dep.spec!.template.spec!.volumes!.some((v) => v.name === 'identity-keys'), 'no key volume');
  t.notOk(offDep.container.volumeMounts!.some((m) => m.mountPath.startsWith('/etc/authgate/identity')), 'nothing mounted');
  t.notOk(Object.keys(one<any>(off, 'Secret').data).some((k) => k.startsWith('identity-')), 'no key generated');

  const external = await render(['existingSecret=authgate-from-vault', 'identity.existingSecretPublishedKeys=2']);
  t.equal(only(external, 'Secret').length, 0, 'existingSecret: no Secret rendered');
  const ext = deploymentOf(external).dep.spec!.template.spec!.volumes!.find((v) => v.name === 'identity-keys')?.secret;
  t.equal(ext?.secretName, 'authgate-from-vault', 'the key comes from the existing Secret');
  t.same(ext?.items?.map((i) => i.key), ['identity-key.pem', 'identity-published-0.pem', 'identity-published-1.pem'], 'its documented key names');
  t.equal(one<any>(external, 'ConfigMap').data.AUTHGATE_IDENTITY_PUBLISHED_KEY_FILES, '/etc/authgate/identity/published-0.pem,/etc/authgate/identity/published-1.pem');
});

t.test('Redis over TLS: the switch, the server name, the CA bundle mounted from a Secret', async (t) => {
  const docs = await renderChart({
    release: RELEASE,
    namespace: NAMESPACE,
    set: [
      'store.type=redis',
      'store.redis.sentinels={s:26379}',
      'store.redis.sentinelName=m',
      'store.redis.sentinelUsername=watcher',
      'store.redis.sentinelPassword=FAKE-SENTINEL-PASSWORD-tls',
      'store.redis.tls.enabled=true',
      'store.redis.tls.serverName=redis.internal',
      'store.redis.tls.ca.secretName=redis-ca',
      'store.redis.tls.ca.key=bundle.pem',
    ],
  });
  const cm = one<any>(docs, 'ConfigMap');
  t.equal(cm.data.AUTHGATE_REDIS_TLS, 'on');
  t.equal(cm.data.AUTHGATE_REDIS_TLS_SERVER_NAME, 'redis.internal');
  t.equal(cm.data.AUTHGATE_REDIS_SENTINEL_USERNAME, 'watcher');
  const { dep, container } = deploymentOf(docs);
  const volume = dep.spec!.template.spec!.volumes!.find((v) => v.name === 'redis-ca');
  t.same(volume?.secret, { secretName: 'redis-ca', items: [{ key: 'bundle.pem', path: 'bundle.pem' }] }, 'only the bundle is projected');
  const mount = container.volumeMounts!.find((m) => m.name === 'redis-ca');
  t.ok(mount?.readOnly, 'mounted read-only');
  t.equal(cm.data.AUTHGATE_REDIS_TLS_CA_FILE, `${mount?.mountPath}/bundle.pem`, 'AUTHGATE_REDIS_TLS_CA_FILE is the mounted file');
  const secret = one<any>(docs, 'Secret');
  t.equal(Buffer.from(secret.data.AUTHGATE_REDIS_SENTINEL_PASSWORD, 'base64').toString(), 'FAKE-SENTINEL-PASSWORD-tls', 'the Sentinel password is in the Secret');
  const ref = (container.env ?? []).find((e) => e.name === 'AUTHGATE_REDIS_SENTINEL_PASSWORD')?.valueFrom?.secretKeyRef;
  t.equal(ref?.key, 'AUTHGATE_REDIS_SENTINEL_PASSWORD', 'and the pods read it from there');

  const plain = await renderChart({ release: RELEASE, namespace: NAMESPACE, set: ['store.type=redis', 'store.redis.clusterNodes={c:6379}'] });
  const plainCm = one<any>(plain, 'ConfigMap');
  t.notOk('AUTHGATE_REDIS_TLS' in plainCm.data, 'TLS is not rendered when off');
  t.notOk(deploymentOf(plain).dep.spec!.template.spec!.volumes!.some((v) => v.name === 'redis-ca'), 'no CA volume without a CA');
});

t.test('existingSecret: no Secret, and the pods read the named one', async (t) => {
  const docs = await renderChart({ release: RELEASE, namespace: NAMESPACE, set: ['existingSecret=authgate-from-vault'] });
  t.equal(only(docs, 'Secret').length, 0, 'no Secret');
  const { container } = deploymentOf(docs);
  const refs = (container.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []));
  t.ok(refs.length >= 3, 'secret settings come from a Secret');
  t.ok(refs.every((n) => n === 'authgate-from-vault'), 'all from authgate-from-vault');
});

t.test('a change of settings or secrets changes the pod template (rolls the pods)', async (t) => {
  // Every generated secret given, so two renders are alike (helm template has no cluster to read them back from).
  const base = ['secrets.adminToken=FAKE-ADMIN-TOKEN-test', `secrets.jwtSecret=${FAKE_JWT}`, `secrets.mfaEncryptionKey=${FAKE_JWT}-mfa`];
  const annotationsOf = async (set: string[], files: string[] = [IDENTITY_KEY]) =>
    deploymentOf(await renderChart({ release: RELEASE, namespace: NAMESPACE, set: [...base, ...set], valuesFiles: files })).dep.spec!.template.metadata!.annotations!;
  const [a, again, config, secret, identityKey] = await Promise.all([
    annotationsOf([]),
    annotationsOf([]),
    annotationsOf(['config.logLevel=debug']),
    annotationsOf([`secrets.jwtSecret=${FAKE_JWT}-rotated`]),
    annotationsOf([], [valuesFile({ secrets: { identityKey: identityKeyPem() } })]),
  ]);
  t.not(identityKey['checksum/secret'], a['checksum/secret'], 'a new identity key changes checksum/secret');
  t.same(a, again, 'same values, same checksums');
  t.not(config['checksum/config'], a['checksum/config'], 'a ConfigMap change changes checksum/config');
  t.equal(config['checksum/secret'], a['checksum/secret'], '…and not checksum/secret');
  t.not(secret['checksum/secret'], a['checksum/secret'], 'a Secret change changes checksum/secret');
  t.equal(secret['checksum/config'], a['checksum/config'], '…and not checksum/config');
});

t.test('the shutdown timing follows the settings', async (t) => {
  const docs = await renderChart({
    release: RELEASE,
    namespace: NAMESPACE,
    set: ['config.shutdownDelaySeconds=12', 'config.shutdownGraceSeconds=40'],
  });
  const { dep, container } = deploymentOf(docs);
  t.same(container.lifecycle?.preStop?.exec?.command, ['/bin/sleep', '12']);
  t.equal(dep.spec!.template.spec!.terminationGracePeriodSeconds, 12 + 12 + 40 + NOTICES_DRAIN_S + 5);
});

t.test('object names follow the release', async (t) => {
  const docs = await renderChart({ release: 'edge', namespace: 'gw' });
  t.same(
    docs.map((d) => `${d.kind}/${d.metadata.name}`).sort(),
    ['ConfigMap/edge-authgate', 'Deployment/edge-authgate', 'PodDisruptionBudget/edge-authgate', 'Secret/edge-authgate', 'Service/edge-authgate', 'Service/edge-authgate-ops', 'ServiceAccount/edge-authgate'],
  );
  t.ok(docs.every((d) => d.metadata.namespace === 'gw'), 'in the release namespace');
});

t.test('production and sandbox releases', async (t) => {
  const prodValues = effectiveValues([join(CHART_DIR, 'values-production.yaml')]);
  const sandValues = effectiveValues([join(CHART_DIR, 'values-sandbox.yaml')]);
  t.equal(prodValues.environment, 'production');
  t.equal(sandValues.environment, 'sandbox');
  t.equal(prodValues.store.type, 'redis', 'production on Redis');
  t.equal(sandValues.store.type, 'redis', 'sandbox on Redis');
  const prod = deploymentOf(renders.get('values-production.yaml')!).container.resources!;
  const sand = deploymentOf(renders.get('values-sandbox.yaml')!).container.resources!;
  t.ok(quantity(sand.requests!.cpu) < quantity(prod.requests!.cpu), 'sandbox requests less CPU');
  t.ok(quantity(sand.requests!.memory) < quantity(prod.requests!.memory), 'sandbox requests less memory');
  t.ok(quantity(sand.limits!.memory) < quantity(prod.limits!.memory), 'sandbox is limited to less memory');
  const prodMax = prodValues.autoscaling.enabled ? prodValues.autoscaling.maxReplicas : prodValues.replicaCount;
  const sandMax = sandValues.autoscaling.enabled ? sandValues.autoscaling.maxReplicas : sandValues.replicaCount;
  t.ok(sandMax < prodMax, 'sandbox runs fewer pods');
  for (const [file, name] of [['values-production.yaml', 'production'], ['values-sandbox.yaml', 'sandbox']] as const) {
    const cm: any = one(renders.get(file)!, 'ConfigMap', RELEASE);
    // Behind one ingress hop: a count, not `true` (which would believe a client's own entries).
    t.equal(cm.data.AUTHGATE_TRUST_PROXY, '1', `${name} trusts exactly the ingress hop`);
  }
  const prodCm: any = one(renders.get('values-production.yaml')!, 'ConfigMap', RELEASE);
  t.equal(prodCm.data.AUTHGATE_REDIS_WAIT_REPLICAS, '1', 'production: a credential write waits for a Redis replica (issue 26)');
  const sandCm: any = one(renders.get('values-sandbox.yaml')!, 'ConfigMap', RELEASE);
  t.notOk('AUTHGATE_REDIS_WAIT_REPLICAS' in sandCm.data, 'the default (0) is not rendered');
  for (const [name, values] of [['production', prodValues], ['sandbox', sandValues]] as const) {
    t.ok(values.existingSecret, `${name} keeps its secrets out of the values`);
    t.same(secretValues(values), [], `${name} values carry no secret`);
  }
});

t.test('the dashboard uses the gateway metrics', async (t) => {
  const text = readFileSync(join(CHART_DIR, 'dashboards', 'authgate.json'), 'utf8');
  const dashboard = JSON.parse(text);
  t.ok(dashboard.uid && dashboard.title && Array.isArray(dashboard.panels), 'a Grafana dashboard');
  const exprs: string[] = dashboard.panels.flatMap((p: any) => (p.targets ?? []).map((q: any) => q.expr));
  for (const metric of METRICS) t.ok(exprs.some((e) => e.includes(metric)), `a panel queries ${metric}`);
  const decisions = exprs.filter((e) => e.includes('authgate_auth_decisions_total')).join(' ');
  for (const label of ['kind', 'outcome', 'reason']) t.match(decisions, new RegExp(`\\b${label}\\b`), `decisions broken down by ${label}`);
  const ids = dashboard.panels.map((p: any) => p.id);
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique');
});

t.test('rate limit, console, CORS and audit retention: rendered from config, checked by the schema, accepted by the gateway', async (t) => {
  const render = (set: string[] = [], files: string[] = []) => renderChart({ release: RELEASE, namespace: NAMESPACE, set, valuesFiles: files });
  const defaults = one<any>(await render(), 'ConfigMap').data as Record<string, string>;
  t.notOk('AUTHGATE_RATE_LIMIT' in defaults, 'no rate limit unless given');
  t.equal(defaults['AUTHGATE_CONSOLE'], 'off', 'the console off unless asked for');
  t.notOk('AUTHGATE_CORS_ORIGINS' in defaults, 'no CORS origin unless given');
  t.notOk('AUTHGATE_AUDIT_MAX_EVENTS' in defaults || 'AUTHGATE_AUDIT_MAX_AGE_DAYS' in defaults, "the gateway's audit retention unless given");

  const set = one<any>(await render([], [IDENTITY_KEY, valuesFile({ config: { rateLimit: '600/60s', console: true, corsOrigins: ['https://app.example.com', 'https://admin.example.com'], webauthnRpId: 'example.com', webauthnOrigins: ['https://app.example.com'], auditMaxEvents: 5000, auditMaxAgeDays: 30 } })]), 'ConfigMap').data as Record<string, string>;
  t.match(set, {
    AUTHGATE_RATE_LIMIT: '600/60s',
    AUTHGATE_CONSOLE: 'on',
    AUTHGATE_CORS_ORIGINS: 'https://app.example.com,https://admin.example.com',
    AUTHGATE_WEBAUTHN_RP_ID: 'example.com',
    AUTHGATE_WEBAUTHN_ORIGINS: 'https://app.example.com',
    AUTHGATE_AUDIT_MAX_EVENTS: '5000',
    AUTHGATE_AUDIT_MAX_AGE_DAYS: '30',
  });
  // What the chart renders, the gateway takes (with the secrets the Secret would add).
  const { AUTHGATE_IDENTITY_KEY_FILE: _keyFile, AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: _jwks, ...settingsOnly } = set;
  const loaded = loadConfig({ ...settingsOnly, AUTHGATE_JWT_SECRET: 'chart-test-jwt-secret-0123456789abcdef', AUTHGATE_ADMIN_TOKEN: 'chart-test-admin-token-0123', AUTHGATE_UPSTREAM_URL: 'http://svc', AUTHGATE_STORE: 'memory', AUTHGATE_IDENTITY_ASSERTION: 'off', AUTHGATE_TLS: 'offloaded' });
  t.ok(loaded.ok, loaded.ok ? 'loaded' : loaded.errors.join('; '));
  if (loaded.ok) {
    t.same(loaded.config.rateLimit.default, { count: 600, windowSeconds: 60 });
    t.equal(loaded.config.console.enabled, true);
    t.same(loaded.config.cors.origins, ['https://app.example.com', 'https://admin.example.com']);
    t.same(loaded.config.webauthn, { rpId: 'example.com', origins: ['https://app.example.com'] });
  }

  for (const [values, what] of [
    [{ config: { rateLimit: '600 per minute' } }, 'a malformed rate limit'],
    [{ config: { corsOrigins: ['https://app.example.com/path'] } }, 'an origin with a path'],
    [{ config: { webauthnOrigins: ['https://app.example.com/console'] } }, 'a WebAuthn origin with a path'],
    [{ config: { webauthnRpId: 'https://example.com' } }, 'an RP ID that is a URL'],
    [{ config: { auditMaxEvents: 10 } }, 'too few audit events'],
    [{ config: { console: 'enabled' } }, 'console not a boolean'],
  ] as const) {
    const refused = await templateFails([], [valuesFile(values)]);
    t.match(refused, /values don't meet the specifications of the schema|schema/i, `refused by the schema: ${what}`);
  }
});

t.test('tracing: off by default; on, the OTEL_* settings rendered, checked by the schema and accepted by the gateway', async (t) => {
  const render = (files: string[] = []) => renderChart({ release: RELEASE, namespace: NAMESPACE, set: [], valuesFiles: files });
  const defaults = one<any>(await render(), 'ConfigMap').data as Record<string, string>;
  t.equal(defaults['AUTHGATE_TRACING'], 'off');
  t.notOk(Object.keys(defaults).some((name) => name.startsWith('OTEL_') || name === 'AUTHGATE_TRACING_ORG_ID'), 'no OpenTelemetry setting while off');

  const on = one<any>(await render([IDENTITY_KEY, valuesFile({ tracing: { enabled: true, endpoint: 'http://otel-collector.observability:4318', samplerRatio: 0.25, serviceName: 'authgate-eu' } })]), 'ConfigMap').data as Record<string, string>;
  t.match(on, {
    AUTHGATE_TRACING: 'on',
    AUTHGATE_TRACING_ORG_ID: 'off',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector.observability:4318',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_SERVICE_NAME: 'authgate-eu',
  });
  const { AUTHGATE_IDENTITY_KEY_FILE: _keyFile, AUTHGATE_IDENTITY_JWKS_ON_PUBLIC_PORT: _jwks, ...settingsOnly } = on;
  const loaded = loadConfig({ ...settingsOnly, AUTHGATE_JWT_SECRET: 'chart-test-jwt-secret-0123456789abcdef', AUTHGATE_ADMIN_TOKEN: 'chart-test-admin-token-0123', AUTHGATE_UPSTREAM_URL: 'http://svc', AUTHGATE_STORE: 'memory', AUTHGATE_IDENTITY_ASSERTION: 'off', AUTHGATE_TLS: 'offloaded' });
  t.ok(loaded.ok, loaded.ok ? 'loaded' : loaded.errors.join('; '));
  if (loaded.ok) t.same(loaded.config.tracing, { enabled: true, recordOrgId: false });

  for (const [values, what] of [
    [{ tracing: { samplerRatio: 2 } }, 'a ratio above 1'],
    [{ tracing: { endpoint: 'otel-collector:4318' } }, 'an endpoint without a scheme'],
    [{ tracing: { enabled: 'enabled' } }, 'enabled not a boolean'],
  ] as const) {
    const refused = await templateFails([], [valuesFile(values)]);
    t.match(refused, /values don't meet the specifications of the schema|schema/i, `refused by the schema: ${what}`);
  }
});

t.test('the second factor\'s key and the notices\' webhook reach the pods from the Secret; a webhook without its secret is refused', async (t) => {
  const docs = await renderChart({ release: RELEASE, namespace: NAMESPACE, set: ['secrets.notifyWebhookUrl=https://notices.example.test/hook', 'secrets.notifyWebhookSecret=a-receiver-secret-of-at-least-32-bytes!'] });
  const secret = only(docs, 'Secret')[0] as unknown as { data: Record<string, string> };
  const decoded = (key: string) => Buffer.from(secret.data[key] ?? '', 'base64').toString();
  t.equal(decoded('AUTHGATE_NOTIFY_WEBHOOK_URL'), 'https://notices.example.test/hook');
  t.equal(decoded('AUTHGATE_NOTIFY_WEBHOOK_SECRET'), 'a-receiver-secret-of-at-least-32-bytes!');
  t.ok(decoded('AUTHGATE_MFA_ENCRYPTION_KEY').length >= 32, 'an MFA key generated once');
  const { container } = deploymentOf(docs);
  const fromSecret = new Set((container.env ?? []).flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.key] : [])));
  for (const name of ['AUTHGATE_MFA_ENCRYPTION_KEY', 'AUTHGATE_MFA_PREVIOUS_ENCRYPTION_KEYS', 'AUTHGATE_NOTIFY_WEBHOOK_URL', 'AUTHGATE_NOTIFY_WEBHOOK_SECRET']) t.ok(fromSecret.has(name), `${name} from the Secret`);
  await t.rejects(renderChart({ release: RELEASE, namespace: NAMESPACE, set: ['secrets.notifyWebhookUrl=https://notices.example.test/hook'] }), /notifyWebhookSecret is required/);
});
