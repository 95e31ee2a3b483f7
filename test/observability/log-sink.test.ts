import t, { type Test } from 'tap';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogSink } from '../../src/observability/log-sink.js';

function fileSink(t: Test, windowMs?: number) {
  const path = join(mkdtempSync(join(tmpdir(), 'authgate-log-')), 'out.log');
  const fd = openSync(path, 'a');
  t.teardown(() => closeSync(fd));
  const sink = createLogSink(fd, windowMs === undefined ? {} : { windowMs });
  // A window left open would hold the test's process: closed before the file is.
  t.teardown(() => sink.flushSync());
  return { sink, read: () => readFileSync(path, 'utf8') };
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Waits until `check` holds, bounded (a busy machine may run the 10 ms timer late). */
async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

t.test('lines of several turns leave together, in order, in one write when their window ends', async (t) => {
  // A window of a minute: what joins a batch, without depending on how fast this machine is.
  const { sink, read } = fileSink(t, 60_000);
  for (let i = 0; i < 100; i++) sink.write(`{"n":${i}}\n`);
  t.equal(read(), '', 'nothing is written during the turn');
  await turn();
  for (let i = 100; i < 200; i++) sink.write(`{"n":${i}}\n`);
  await turn();
  t.equal(read(), '', 'nor when the turn ends: the window is still open');
  sink.flushSync();
  const lines = read().split('\n').filter(Boolean);
  t.same(lines.map((line) => (JSON.parse(line) as { n: number }).n), [...Array(200).keys()], 'all of them, in order');
});

t.test('a line waits about BATCH_WINDOW_MS, never for more lines', async (t) => {
  const { sink, read } = fileSink(t);
  sink.write('alone\n');
  await until(() => read() === 'alone\n', 'a lone line');
  t.pass('a lone line is written without any other line coming');
});

t.test('a large batch leaves at once, before its window ends', async (t) => {
  const { sink, read } = fileSink(t);
  const line = `${'x'.repeat(1023)}\n`;
  for (let i = 0; i < 64; i++) sink.write(line);
  t.equal(read().length, 64 * 1024, 'written during the turn, at 64 KiB');
  sink.write('after\n');
  t.equal(read().length, 64 * 1024, 'the next line waits for its own window');
  await until(() => read().endsWith('after\n'), 'the next batch');
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

t.test('lines written as bytes (room) and as strings leave in the order they were logged, strings in UTF-8', async (t) => {
  const { sink, read } = fileSink(t, 60_000);
  const bytesLine = (text: string) => {
    const batch = sink.room!(Buffer.byteLength(text));
    t.ok(batch, 'room for a line');
    batch!.pos += batch!.buf.write(text, batch!.pos);
  };
  const expected: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const text = i % 3 === 0 ? `{"bytes":${i}}\n` : `{"text":"é\u2028\u{1f600} ${i}"}\n`;
    if (i % 3 === 0) bytesLine(text);
    else sink.write(text);
    expected.push(text);
  }
  sink.flushSync();
  t.equal(read(), expected.join(''), 'every line, in order, across batches');
  t.equal(sink.room!(64 * 1024 + 1), undefined, 'no room for more than a batch');
});

t.test('a line larger than a batch leaves on its own, after the lines before it', async (t) => {
  const { sink, read } = fileSink(t, 60_000);
  sink.write('before\n');
  const large = `${'é'.repeat(40 * 1024)}\n`;
  sink.write(large);
  t.equal(read(), `before\n${large}`, 'written at once, in order');
  sink.write('after\n');
  sink.flushSync();
  t.equal(read(), `before\n${large}after\n`);
});
