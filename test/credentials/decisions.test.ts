import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { DECISION_REASONS } from '../../src/credentials/decisions.js';

/** The documented reasons of authgate_auth_decisions_total are the closed union, in its order. */
t.test('the metrics table lists exactly the decision reasons', async (t) => {
  const root = new URL('../../', import.meta.url);
  const documents = ['README.md', ...readdirSync(new URL('docs/', root)).map((name) => `docs/${name}`)].filter((path) => path.endsWith('.md'));
  const rows = documents
    .flatMap((path) => readFileSync(new URL(path, root), 'utf8').split('\n'))
    .filter((line) => line.startsWith('| `authgate_auth_decisions_total`'));
  t.ok(rows.length >= 1, 'the metric is documented');
  for (const row of rows) {
    const list = /reasons are a fixed list \(([^)]*)\)/.exec(row);
    t.ok(list, 'with its list of reasons');
    const documented = [...(list?.[1] ?? '').matchAll(/`([a-z_]+)`/g)].map((match) => match[1]);
    t.strictSame(documented, [...DECISION_REASONS]);
  }
});
