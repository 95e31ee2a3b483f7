/**
 * route-table/watch.ts on a real directory: a Kubernetes ConfigMap update reproduced exactly as
 * the kubelet's atomic writer does it (a new `..<timestamp>` directory, a `..data_tmp` symlink to
 * it renamed over `..data`, the old directory removed; `routes.yaml -> ..data/routes.yaml` never
 * touched), an editor's write-and-rename, a write in place; a file beside it that changes, or the
 * same bytes written again, never asks for a reload.
 */
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../src/observability/logging.js';
import { watchRoutesFile } from '../../src/route-table/watch.js';
import { captureLogs } from '../helpers/log-capture.js';
import { configMapVolume } from '../helpers/routes-files.js';

async function until(condition: () => boolean, ms = 5000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return condition();
}

function setup(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'authgate-routes-watch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const logs = captureLogs();
  return { dir, logger: createLogger('info', logs.destination), logs };
}

t.test('a ConfigMap update (the ..data symlink swapped) is seen, once per change, again and again', async (t) => {
  const { dir, logger } = setup(t);
  const volume = configMapVolume(dir);
  volume.publish('version: 1 # first\n');
  let changes = 0;
  const watcher = watchRoutesFile({ path: volume.path, logger, onChange: () => changes++ });
  t.teardown(() => watcher.close());

  volume.publish('version: 1 # second\n');
  t.ok(await until(() => changes === 1), 'the swap is seen');
  t.equal(readFileSync(volume.path, 'utf8'), 'version: 1 # second\n', 'and the file reads the new content');

  // The previous timestamped directory is gone now; the watch is on the directory, so it goes on.
  volume.publish('version: 1 # third\n');
  t.ok(await until(() => changes === 2), 'the next swap too');

  // The same bytes published again (a ConfigMap re-applied): events, but no change.
  volume.publish('version: 1 # third\n');
  volume.publish('version: 1 # fourth\n');
  t.ok(await until(() => changes >= 3), 'a later change is seen');
  t.equal(changes, 3, 'and the republished same content never was');
});

t.test('an editor writing a new file and renaming it over, and a write in place, are seen; a file beside it is not', async (t) => {
  const { dir, logger } = setup(t);
  const path = join(dir, 'routes.yaml');
  writeFileSync(path, 'version: 1\n');
  let changes = 0;
  const watcher = watchRoutesFile({ path, logger, onChange: () => changes++ });
  t.teardown(() => watcher.close());

  writeFileSync(join(dir, '.routes.yaml.swp'), 'x');
  writeFileSync(join(dir, 'routes.yaml.tmp'), 'version: 1 # renamed\n');
  renameSync(join(dir, 'routes.yaml.tmp'), path);
  t.ok(await until(() => changes === 1), 'the rename is seen');

  writeFileSync(join(dir, 'other.yaml'), 'unrelated');
  writeFileSync(path, 'version: 1 # in place\n');
  t.ok(await until(() => changes === 2), 'the write in place is seen');
  writeFileSync(join(dir, 'other.yaml'), 'unrelated, changed');
  writeFileSync(path, 'version: 1 # last\n');
  t.ok(await until(() => changes >= 3));
  t.equal(changes, 3, 'the files beside it never asked for a reload');
});

t.test('a burst of writes is one reload (debounced), and a file that goes away is a change too', async (t) => {
  const { dir, logger } = setup(t);
  const path = join(dir, 'routes.yaml');
  writeFileSync(path, 'version: 1\n');
  let changes = 0;
  const watcher = watchRoutesFile({ path, logger, onChange: () => changes++, debounceMs: 200 });
  t.teardown(() => watcher.close());
  for (let i = 0; i < 20; i++) writeFileSync(path, `version: 1 # ${i}\n`);
  t.ok(await until(() => changes >= 1), 'seen');
  rmSync(path);
  t.ok(await until(() => changes >= 2), 'the removal is seen (the reload will say the file is missing)');
  t.equal(changes, 2, 'twenty writes in a burst were one change');
});

t.test('closed, it asks for nothing more', async (t) => {
  const { dir, logger } = setup(t);
  const path = join(dir, 'routes.yaml');
  writeFileSync(path, 'version: 1\n');
  let closedChanges = 0;
  const closed = watchRoutesFile({ path, logger, onChange: () => closedChanges++ });
  closed.close();
  let changes = 0;
  const open = watchRoutesFile({ path, logger, onChange: () => changes++ });
  t.teardown(() => open.close());
  writeFileSync(path, 'version: 1 # changed\n');
  t.ok(await until(() => changes === 1), 'a watcher still open sees it');
  t.equal(closedChanges, 0, 'the closed one did not');
});
