/**
 * The bench's gateways run with the per-tenant growth limits off (bench/runner/tenant-limits.ts):
 * its extra phases create 200 keys and log in at full speed in one organization. Checked with the
 * gateway's own settings loader: the names are real settings, read as meant, and the defaults
 * would have refused the bench (they did, from issue 26 on, until this was set).
 */
import t from 'tap';
import { BENCH_TENANT_LIMITS } from '../../bench/runner/tenant-limits.js';
import { loadConfig } from '../../src/config/load.js';

const REVOCATION_KEYS = 200;

t.test('the bench env turns the creation limits off and lifts the session cap', async (t) => {
  const loaded = loadConfig({ ...BENCH_TENANT_LIMITS });
  if (!loaded.ok) return t.fail(loaded.errors.join('; '));
  const limits = loaded.config.tenantLimits;
  t.equal(limits.keyCreation, undefined, 'key creations unlimited');
  t.equal(limits.sessionCreation, undefined, 'logins unlimited');
  t.equal(limits.maxSessions, 1_000_000, 'sessions: the most the setting allows');
  t.ok(limits.maxKeys >= REVOCATION_KEYS + 10, `the key cap (${limits.maxKeys}) holds the revocation phase's keys`);
});

t.test('the defaults would refuse the bench: fewer creations a minute than its revocation phase makes', async (t) => {
  const loaded = loadConfig({});
  if (!loaded.ok) return t.fail(loaded.errors.join('; '));
  const limits = loaded.config.tenantLimits;
  t.ok(limits.keyCreation !== undefined && limits.keyCreation.count < REVOCATION_KEYS && limits.keyCreation.windowSeconds >= 60, 'keys: the default refuses 200 in a minute');
  t.ok(limits.sessionCreation !== undefined && limits.sessionCreation.count < 100, 'logins: the default refuses a full-speed login phase');
});
