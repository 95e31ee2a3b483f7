/**
 * What a start concludes from the environment before it listens: the refusals (config/load.ts)
 * and the warnings. A start (main.ts) and a check (`node dist/main.js --check`,
 * `authgate config check`) both come through here, so a check passes exactly when a start would
 * get past its configuration. A check, like `nginx -t`, reads the files the settings name but
 * neither listens nor connects: a Redis that is down is the start's business, not the check's.
 */
import type { Config } from './config.js';
import { loadConfig, type Env } from './load.js';
import { unknownSettings } from './settings.js';

export type StartWarning = { event: string; message: string; fields?: Record<string, string> };

/** The warnings a start logs for this configuration; never a setting's value. */
export function startWarnings(config: Config, env: Env): StartWarning[] {
  const warnings: StartWarning[] = [];
  if (config.upstream.url === undefined && config.identity.mode === 'off') {
    warnings.push({
      event: 'example_upstream_needs_identity',
      message: 'AUTHGATE_IDENTITY_ASSERTION=off: the bundled example upstream refuses every request without the x-authgate-identity assertion (401)',
    });
  }
  if (config.upstream.url === undefined && routesToDefaultUpstream(config)) {
    // The operator's own routes, sent to a stand-in that knows only the built-in table's paths (issue 46).
    warnings.push({
      event: 'routes_to_example_upstream',
      message:
        "AUTHGATE_UPSTREAM_URL is not set: the routes file's routes on the default upstream go to the bundled example upstream, which serves only /accounts and /organization/me (404 for the rest) and is not your service; set AUTHGATE_UPSTREAM_URL to your service's URL (or give upstreams.default a url in the file)",
    });
  }
  if (config.store.kind === 'memory' && config.production) {
    warnings.push({ event: 'memory_store', message: 'AUTHGATE_STORE=memory in production: one replica only, and everything is lost on restart' });
  }
  if (config.production && config.tls.mode === 'off') {
    warnings.push({
      event: 'tls_off',
      message: 'TLS is off: the interface is HTTPS only; terminate TLS here (AUTHGATE_TLS_CERT_FILE/KEY_FILE) or set AUTHGATE_TLS=offloaded behind an ingress that does',
    });
  }
  if (config.production && config.notices !== undefined && config.notices.webhookUrl.startsWith('http:')) {
    // Signed, so not forgeable; but a notice names the organization and its e-mail addresses.
    warnings.push({ event: 'notify_webhook_plain_http', message: 'AUTHGATE_NOTIFY_WEBHOOK_URL is http://: security notices (names and e-mail addresses) cross the network unencrypted; use https://' });
  }
  for (const name of unknownSettings(env)) {
    // The name only: a value could be a secret set under a misspelt name.
    warnings.push({ event: 'unknown_setting', fields: { name }, message: `${name} is not an authgate setting and is ignored: check its spelling` });
  }
  if (config.jwt.generated) warnings.push({ event: 'generated_jwt_secret', message: 'no AUTHGATE_JWT_SECRET: generated one for this process; tokens end with it' });
  return warnings;
}

export type CheckOutput = { stdout: (line: string) => void; stderr: (line: string) => void };

/**
 * Checks `env` and prints the outcome: each problem as a start prints it (`authgate: <SETTING>
 * <problem>`), each warning, and one closing line. Returns the exit status: 0 valid, 1 not.
 */
export function checkConfig(env: Env, out: CheckOutput): number {
  const loaded = loadConfig(env);
  if (!loaded.ok) {
    for (const line of loaded.errors) out.stderr(`authgate: ${line}`);
    const count = loaded.errors.length;
    out.stderr(`authgate: configuration check failed: ${count} problem${count === 1 ? '' : 's'}; the gateway would not start`);
    return 1;
  }
  const { config } = loaded;
  for (const warning of startWarnings(config, env)) out.stderr(`authgate: warning: ${warning.message}`);
  const mode = config.production ? 'production' : 'development';
  const store = config.store.kind === 'memory' ? 'memory' : `redis (${[config.store.url && 'url', config.store.sentinels && 'sentinels', config.store.clusterNodes && 'cluster'].filter(Boolean).join('')})`;
  out.stdout(
    `authgate: configuration is valid: ${mode}, environment ${config.environment}, store ${store}, ` +
      `public ${config.publicListener.host}:${config.publicListener.port}, ops ${config.opsListener.host}:${config.opsListener.port}, TLS ${config.tls.mode}, ` +
      `routes ${config.routesFile === undefined ? 'built in' : `${config.routesFile.path} (${config.routesFile.file.routes.length})`}`,
  );
  return 0;
}

/** Whether a routes file sends any route to the `default` upstream without a url of its own (so AUTHGATE_UPSTREAM_URL's, or the example's). */
function routesToDefaultUpstream(config: Config): boolean {
  const file = config.routesFile?.file;
  if (file === undefined || file.upstreams?.['default']?.url !== undefined) return false;
  return file.routes.some((route) => (route.upstream ?? 'default') === 'default');
}
