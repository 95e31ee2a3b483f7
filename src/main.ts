import { loadConfig } from './config/load.js';
import { checkConfig, startWarnings } from './config/check.js';
import { startExampleUpstream } from './example-upstream.js';
import { listenExtAuthzGrpc } from './edge-authz/grpc/listen.js';
import { buildGateway } from './gateway.js';
import { createLogSink } from './observability/log-sink.js';
import { createPrettySink, wantsPrettyLogs } from './observability/pretty-sink.js';
import { JWKS_PATH } from './routes/jwks.js';
import { loadWebAuthn } from './services/passkeys.js';

/** Process entry: the only module that reads process.env, listens, and handles signals. */
async function main(): Promise<void> {
  // `--check`: validate the environment as below, print the outcome, exit; never listen or connect.
  if (process.argv.slice(2).includes('--check')) {
    process.exitCode = checkConfig(process.env, { stdout: (line) => console.log(line), stderr: (line) => console.error(line) });
    return;
  }
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    for (const line of loaded.errors) console.error(`authgate: ${line}`);
    process.exit(1);
  }
  const { config } = loaded;
  let stopping = false;

  // Readable lines for a person at a terminal in development; JSON everywhere else.
  const logSink = (wantsPrettyLogs(config.production, process.stdout) ? await createPrettySink(1) : undefined) ?? createLogSink(1);
  // Whatever way the process ends, the lines of its last turn still reach stdout.
  process.on('exit', () => logSink.flushSync());

  // The bundled example verifies the identity assertion with the JWKS this process serves on its ops port.
  const example =
    config.upstream.url === undefined
      ? await startExampleUpstream({ jwksUrl: `http://127.0.0.1:${config.opsListener.port}${JWKS_PATH}`, issuer: config.jwt.issuer })
      : undefined;
  const gateway = await buildGateway(config, { logDestination: logSink, ...(example ? { upstreamUrl: example.url } : {}) });
  const { logger } = gateway;
  // SIGHUP reloads the routes file (route-table/reload.ts). Handled from here on, before the
  // listeners open: node's default for SIGHUP is to exit, and a reload signal sent to a starting
  // replica must not end it.
  process.on('SIGHUP', () => {
    if (stopping) return;
    gateway.reloadRoutes('signal').then(
      (outcome) => {
        if (outcome === undefined) logger.info({ event: 'routes_reload_skipped', signal: 'SIGHUP' }, 'SIGHUP: no routes file (AUTHGATE_ROUTES_FILE) to reload; the built-in table stays');
      },
      (error: unknown) => logger.error({ event: 'routes_reload_failed', signal: 'SIGHUP', err: error instanceof Error ? { message: error.message } : String(error) }, 'SIGHUP: the reload failed'),
    );
  });

  await gateway.opsServer.listen({ ...config.opsListener });
  await gateway.publicServer.listen({ ...config.publicListener });
  // The edge proxies' authorization port (AUTHGATE_AUTHZ_PORT), when set.
  const authz = gateway.authzServer;
  if (authz !== undefined) await new Promise<void>((resolve, reject) => authz.server.once('error', reject).listen(config.authz.port, config.authz.host, () => resolve()));
  // Envoy ext_authz over gRPC (AUTHGATE_AUTHZ_GRPC_PORT; off unless set).
  const extAuthzGrpc = await listenExtAuthzGrpc(gateway.edge, config, logger);
  logger.info(
    {
      event: 'started',
      store: config.store.kind,
      publicPort: config.publicListener.port,
      opsPort: config.opsListener.port,
      ...(authz !== undefined && { authzPort: config.authz.port }),
      ...(extAuthzGrpc !== undefined && { authzGrpcPort: extAuthzGrpc.port }),
      upstream: example ? 'bundled example' : 'configured',
    },
    'authgate started',
  );
  // Passkeys offered: their library is loaded now, after the start, not by the first login that needs it.
  if (config.webauthn !== undefined) {
    loadWebAuthn().catch((error: unknown) => logger.error({ event: 'passkeys_library_failed', err: error instanceof Error ? { message: error.message } : String(error) }, 'the passkeys library did not load'));
  }
  for (const { event, message, fields } of startWarnings(config, process.env)) {
    logger.warn({ event, ...fields }, message);
  }
  if (config.admin.generated) {
    // Printed once, to the terminal only, never to the log stream: development convenience.
    process.stderr.write(`\nauthgate: development admin token (set AUTHGATE_ADMIN_TOKEN to choose one):\n  ${config.admin.token}\n\n`);
  }

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: 'shutdown', signal }, 'draining');
    gateway.startDraining();
    // Listeners stay open while load balancers notice the failed readiness.
    await new Promise((resolve) => setTimeout(resolve, config.shutdown.delaySeconds * 1000));
    const deadline = setTimeout(() => {
      logger.warn({ event: 'shutdown_grace_exceeded' }, 'in-flight requests did not finish in time');
      gateway.publicServer.server.closeAllConnections();
      authz?.closeAllConnections();
    }, config.shutdown.graceSeconds * 1000);
    deadline.unref();
    // The gRPC listener first: its calls in flight are answered (within the grace) while the store is still open.
    await extAuthzGrpc?.close(config.shutdown.graceSeconds * 1000);
    await gateway.close();
    await example?.close();
    clearTimeout(deadline);
    logger.info({ event: 'stopped' }, 'authgate stopped');
    logger.flush();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main().catch((error: unknown) => {
  console.error('authgate: failed to start:', error instanceof Error ? error.message : String(error));
  process.exit(1);
});
