import t, { type Test } from 'tap';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogSink } from '../../src/observability/log-sink.js';

function fileSink(t: Test) {
  const path = join(mkdtempSync(join(tmpdir(), 'authgate-log-')), 'out.log');
  const fd = openSync(path, 'a');
  t.teardown(() => closeSync(fd));
  return { sink: createLogSink(fd), read: () => readFileSync(path, 'utf8') };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

t.test("a turn's lines leave together, in order, when the turn ends", async (t) => {
  const { sink, read } = fileSink(t);
  for (let i = 0; i < 1000; i++) sink.write(`{"n":${i}}\n`);
  t.equal(read(), '', 'nothing is written during the turn');
  await turn();
  const lines = read().split('\n').filter(Boolean);
  t.equal(lines.length, 1000);
  t.same(lines.map((line) => (JSON.parse(line) as { n: number }).n), [...Array(1000).keys()], 'in order');
});

t.test('flushSync and flush write what is pending before they return, in order, and nothing twice', async (t) => {
  const { sink, read } = fileSink(t);
  sink.write('one\n');
  await turn();
  sink.write('two\n');
  sink.flushSync();
  t.equal(read(), 'one\ntwo\n');
  sink.write('three\n');
  let called = false;
  sink.flush(() => (called = true));
  t.ok(called);
  t.equal(read(), 'one\ntwo\nthree\n');
  await turn();
  t.equal(read(), 'one\ntwo\nthree\n', 'and nothing twice');
});
