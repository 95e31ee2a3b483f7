/**
 * The chart's authz listener (issue 30): off by default; on, the settings, the container ports,
 * an internal ClusterIP Service the edge proxies call (never the Ingress's), the NetworkPolicy
 * rule, and the refusals of values that could not work. Rendered with the real Helm.
 */
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { Service } from 'kubernetes-models/v1/Service';
import { loadConfig } from '../../src/config/load.js';
import { settings } from '../../src/config/settings.js';
import { CHART_DIR, helm, renderChart, templateArgs, unknownFields, type K8sObject, type RenderOptions } from '../helpers/helm.js';

const dir = mkdtempSync(join(tmpdir(), 'authgate-helm-authz-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const BASE = join(dir, 'base.yaml');
writeFileSync(BASE, 'config:\n  upstreamUrl: http://upstream.test:8080\n');
const ON = join(dir, 'authz.yaml');
writeFileSync(ON, ['authz:', '  enabled: true', '  grpcPort: 9092', '  trustedProxies: [10.42.0.0/16, 192.0.2.7]', '  cacheSeconds: 2', 'networkPolicy:', '  enabled: true', 'ingress:', '  enabled: true', '  hosts: [{host: api.example.com, paths: [{path: /, pathType: Prefix}]}]', ''].join('\n'));

const render = (opts: RenderOptions = {}) => renderChart({ namespace: 'authgate', release: 'authgate', ...opts, valuesFiles: [BASE, ...(opts.valuesFiles ?? [])] });
const find = (docs: K8sObject[], kind: string, name?: string): any[] => docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

t.test('off by default: no authz setting, port or Service', async (t) => {
  const docs = await render();
  const [cm] = find(docs, 'ConfigMap', 'authgate');
  t.same(Object.keys(cm.data).filter((k) => k.startsWith('AUTHGATE_AUTHZ_')), []);
  t.same(find(docs, 'Service', 'authgate-authz'), []);
  const [deployment] = find(docs, 'Deployment');
  t.notOk(deployment.spec.template.spec.containers[0].ports.some((p: { name: string }) => p.name.startsWith('authz')));
});

t.test('on: the settings, the ports, an internal Service, the NetworkPolicy rule', async (t) => {
  const docs = await render({ valuesFiles: [ON] });
  const [cm] = find(docs, 'ConfigMap', 'authgate');
  t.same(
    Object.fromEntries(Object.entries(cm.data).filter(([k]) => k.startsWith('AUTHGATE_AUTHZ_'))),
    {
      AUTHGATE_AUTHZ_HOST: '0.0.0.0',
      AUTHGATE_AUTHZ_PORT: '9091',
      AUTHGATE_AUTHZ_GRPC_PORT: '9092',
      AUTHGATE_AUTHZ_TRUSTED_PROXIES: '10.42.0.0/16,192.0.2.7',
      AUTHGATE_AUTHZ_CACHE_SECONDS: '2',
    },
  );
  // The gateway reads them as rendered. AUTHGATE_AUTHZ_GRPC_PORT is lane edge-grpc's setting
  // (Envoy's gRPC ext_authz), not in this branch's table yet: checked once that lane is merged.
  const known = new Set<string>(settings.map((s) => s.name));
  const rendered = Object.entries(cm.data as Record<string, string>).filter(([k]) => k.startsWith('AUTHGATE_AUTHZ_') && k !== 'AUTHGATE_AUTHZ_GRPC_PORT');
  for (const [name] of rendered) t.ok(known.has(name), `${name} is a setting of the gateway`);
  const loaded = loadConfig({ ...Object.fromEntries(rendered), AUTHGATE_PORT: '8080', AUTHGATE_OPS_PORT: '9090' });
  t.ok(loaded.ok, `the gateway accepts them: ${loaded.ok ? '' : loaded.errors.join('; ')}`);
  if (loaded.ok) {
    t.equal(loaded.config.authz.port, 9091);
    t.equal(loaded.config.authz.cacheSeconds, 2);
  }
  const [deployment] = find(docs, 'Deployment');
  const container = deployment.spec.template.spec.containers[0];
  const ports = Object.fromEntries(container.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]));
  t.equal(ports['authz'], 9091);
  t.equal(ports['authz-grpc'], 9092);

  const [service] = find(docs, 'Service', 'authgate-authz');
  t.doesNotThrow(() => new Service(service).validate(), 'a valid Service');
  t.same(unknownFields(service), []);
  t.equal(service.spec.type, 'ClusterIP', 'internal only');
  t.same(service.spec.selector, deployment.spec.selector.matchLabels, 'selects the gateway pods');
  t.same(
    service.spec.ports.map((p: any) => [p.name, p.port, p.targetPort, p.appProtocol]),
    [
      ['authz', 9091, 'authz', 'http'],
      ['authz-grpc', 9092, 'authz-grpc', 'kubernetes.io/h2c'],
    ],
  );
  // The snippets in deploy/edge/ name this Service and these ports.
  for (const file of ['nginx.conf', 'traefik-middleware.yaml', 'ingress-nginx.yaml', 'istio.yaml', 'envoy-gateway.yaml']) {
    const text = readFileSync(join(CHART_DIR, '..', '..', 'deploy', 'edge', file), 'utf8');
    if (file !== 'nginx.conf') t.match(text, 'authgate-authz', `${file} names the Service`);
    t.match(text, /[: ]9091\b/, `${file} names the authz port`);
  }

  // Never behind the public Ingress.
  const [ingress] = find(docs, 'Ingress');
  const backends = JSON.stringify(ingress.spec);
  t.notMatch(backends, 'authgate-authz');

  const [policy] = find(docs, 'NetworkPolicy');
  t.doesNotThrow(() => new NetworkPolicy(policy).validate(), 'a valid NetworkPolicy');
  const rule = policy.spec.ingress.find((r: any) => r.ports.some((p: any) => p.port === 9091));
  t.ok(rule, 'a rule for the authz port');
  t.same(rule.ports.map((p: any) => p.port), [9091, 9092]);
});

t.test('refused: on without trusted proxies, a port shared with another listener, a cache above 5 s', async (t) => {
  const fails = async (set: string[], expected: RegExp) => {
    const res = await helm(templateArgs({ namespace: 'authgate', release: 'authgate', valuesFiles: [BASE], set: ['authz.enabled=true', ...set] }));
    t.not(res.status, 0, set.join(' '));
    t.match(res.stderr, expected, set.join(' '));
  };
  await fails([], /authz\.trustedProxies/);
  await fails(['authz.trustedProxies={10.0.0.0/8}', 'authz.port=9090'], /must differ/);
  await fails(['authz.trustedProxies={10.0.0.0/8}', 'authz.grpcPort=9091'], /must differ/);
  await fails(['authz.trustedProxies={10.0.0.0/8}', 'authz.cacheSeconds=6'], /cacheSeconds/);
});
