import t, { type Test } from 'tap';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogSink } from '../../src/observability/log-sink.js';

function fileSink(t: Test, sync: boolean) {
  const path = join(mkdtempSync(join(tmpdir(), 'authgate-log-')), 'out.log');
  const fd = openSync(path, 'a');
  t.teardown(() => closeSync(fd));
  return { sink: createLogSink({ fd, sync }), read: () => readFileSync(path, 'utf8') };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

for (const sync of [true, false]) {
  t.test(`${sync ? 'synchronous' : 'asynchronous'}: a turn's lines leave together, in order, when the turn ends`, async (t) => {
    const { sink, read } = fileSink(t, sync);
    for (let i = 0; i < 1000; i++) sink.write(`{"n":${i}}\n`);
    t.equal(read(), '', 'nothing is written during the turn');
    await turn();
    if (!sync) await new Promise<void>((resolve, reject) => sink.flush((error) => (error ? reject(error) : resolve())));
    const lines = read().split('\n').filter(Boolean);
    t.equal(lines.length, 1000);
    t.same(lines.map((line) => (JSON.parse(line) as { n: number }).n), [...Array(1000).keys()], 'in order');
  });

  t.test(`${sync ? 'synchronous' : 'asynchronous'}: flushSync writes what is pending before it returns`, async (t) => {
    const { sink, read } = fileSink(t, sync);
    sink.write('one\n');
    await turn();
    sink.write('two\n');
    sink.flushSync();
    t.equal(read(), 'one\ntwo\n');
    await turn();
    t.equal(read(), 'one\ntwo\n', 'and nothing twice');
  });
}
