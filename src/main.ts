import { loadConfig } from './config/load.js';
import { unknownSettings } from './config/settings.js';
import { startExampleUpstream } from './example-upstream.js';
import { buildGateway } from './gateway.js';
import { createLogSink } from './observability/log-sink.js';
import { JWKS_PATH } from './routes/jwks.js';

/** Process entry: the only module that reads process.env, listens, and handles signals. */
async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) {
    for (const line of loaded.errors) console.error(`authgate: ${line}`);
    process.exit(1);
  }
  const { config } = loaded;

  const logSink = createLogSink(1);
  // Whatever way the process ends, the lines of its last turn still reach stdout.
  process.on('exit', () => logSink.flushSync());

  // The bundled example verifies the identity assertion with the JWKS this process serves on its ops port.
  const example =
    config.upstream.url === undefined
      ? await startExampleUpstream({ jwksUrl: `http://127.0.0.1:${config.opsListener.port}${JWKS_PATH}`, issuer: config.jwt.issuer })
      : undefined;
  const gateway = await buildGateway(config, { logDestination: logSink, ...(example ? { upstreamUrl: example.url } : {}) });
  const { logger } = gateway;

  await gateway.opsServer.listen({ ...config.opsListener });
  await gateway.publicServer.listen({ ...config.publicListener });
  logger.info(
    {
      event: 'started',
      store: config.store.kind,
      publicPort: config.publicListener.port,
      opsPort: config.opsListener.port,
      upstream: example ? 'bundled example' : 'configured',
    },
    'authgate started',
  );
  if (example && config.identity.mode === 'off') {
    logger.warn(
      { event: 'example_upstream_needs_identity' },
      'AUTHGATE_IDENTITY_ASSERTION=off: the bundled example upstream refuses every request without the x-authgate-identity assertion (401)',
    );
  }
  if (config.store.kind === 'memory' && config.production) {
    logger.warn({ event: 'memory_store' }, 'AUTHGATE_STORE=memory in production: one replica only, and everything is lost on restart');
  }
  if (config.production && config.tls.mode === 'off') {
    logger.warn({ event: 'tls_off' }, 'TLS is off: the interface is HTTPS only; terminate TLS here (AUTHGATE_TLS_CERT_FILE/KEY_FILE) or set AUTHGATE_TLS=offloaded behind an ingress that does');
  }
  for (const name of unknownSettings(process.env)) {
    // The name only: a value could be a secret set under a misspelt name.
    logger.warn({ event: 'unknown_setting', name }, `${name} is not an authgate setting and is ignored: check its spelling`);
  }
  if (config.jwt.generated) logger.warn({ event: 'generated_jwt_secret' }, 'no AUTHGATE_JWT_SECRET: generated one for this process; tokens end with it');
  if (config.admin.generated) {
    // Printed once, to the terminal only, never to the log stream: development convenience.
    process.stderr.write(`\nauthgate: development admin token (set AUTHGATE_ADMIN_TOKEN to choose one):\n  ${config.admin.token}\n\n`);
  }

  let stopping = false;
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
    }, config.shutdown.graceSeconds * 1000);
    deadline.unref();
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
