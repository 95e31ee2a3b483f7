/**
 * The chart's NOTES as `helm install` prints them, rendered by the real Helm 3 (test/helpers/helm.ts).
 *
 * `helm template` never renders NOTES.txt, and `helm install --dry-run=client` (Helm 3.17) still
 * asks a cluster for its version and API groups. So the install runs against a stand-in API
 * server on loopback that answers only those discovery requests (and 404 to anything else, which
 * is what `lookup` of a Secret that does not exist gets), with Helm's in-memory release storage:
 * nothing is installed, and the NOTES are the engine's own rendering of the release.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHART_DIR, REPO_ROOT, TOOLS_DIR, getHelm } from './helm.js';

/** Answers Helm's discovery: a cluster of the Kubernetes version given, with only the core group. */
function fakeApiServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const send = (status: number, body: object) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (path === '/version') return send(200, { major: '1', minor: '31', gitVersion: 'v1.31.0' });
    if (path === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'] });
    if (path === '/apis') return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
    send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}` });
    });
  });
}

export type NotesOptions = { release?: string; namespace?: string; valuesFiles?: string[]; set?: string[] };

/** The NOTES `helm install` prints for these values (the text after "NOTES:"); rejects with Helm's error. */
export async function renderNotes(opts: NotesOptions = {}): Promise<string> {
  const bin = getHelm();
  const { server, url } = await fakeApiServer();
  const dir = mkdtempSync(join(tmpdir(), 'authgate-helm-notes-'));
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: stand-in, cluster: {server: "${url}"}}]\ncontexts: [{name: stand-in, context: {cluster: stand-in}}]\ncurrent-context: stand-in\nusers: []\n`,
    );
    const releases = join(dir, 'releases.yaml');
    writeFileSync(releases, '[]\n');
    const home = join(TOOLS_DIR, 'helm-home');
    const args = ['install', opts.release ?? 'authgate', CHART_DIR, '--namespace', opts.namespace ?? 'authgate', '--dry-run=client'];
    for (const f of opts.valuesFiles ?? []) args.push('--values', f);
    for (const s of opts.set ?? []) args.push('--set', s);
    const env = {
      ...process.env,
      HELM_CACHE_HOME: join(home, 'cache'),
      HELM_CONFIG_HOME: join(home, 'config'),
      HELM_DATA_HOME: join(home, 'data'),
      KUBECONFIG: kubeconfig,
      HELM_DRIVER: 'memory',
      HELM_MEMORY_DRIVER_DATA: releases,
    };
    const { status, stdout, stderr } = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(bin, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      child.on('error', reject);
      child.on('close', (code) => resolve({ status: code ?? -1, stdout: out, stderr: err }));
    });
    if (status !== 0) throw new Error(`helm install --dry-run failed (${status}):\n${stderr}`);
    const at = stdout.lastIndexOf('\nNOTES:\n');
    if (at === -1) throw new Error(`helm install --dry-run printed no NOTES:\n${stdout}`);
    // The manifests follow the NOTES only with --debug; without, the NOTES end the output.
    return stdout.slice(at + '\nNOTES:\n'.length);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
