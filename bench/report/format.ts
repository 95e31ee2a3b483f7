/**
 * The report's output: rows of one markdown table, the machine and run lines, the notes, and the
 * JSON file when asked (--json). Everything the bench prints on stdout goes through here.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Options } from '../options.js';
import type { Machine } from '../runner/processes.js';

export type Verdict = 'PASS' | 'MISS' | 'SKIPPED' | '';
export type Row = { scenario: string; rps: string; p50: string; p99: string; ratio: string; target: string; result: Verdict };

/** What a phase adds to the report: table rows, note lines, and figures for the JSON. */
export type ReportParts = { rows: Row[]; notes: string[]; report: Record<string, unknown> };

export const fmt = {
  rps: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—'),
  ms: (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2)) : '—'),
  ratio: (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '—'),
};

/** A difference of ratios, with its sign (− for a cost). */
export const signed = (n: number) => (Number.isFinite(n) ? `${n < 0 ? '−' : '+'}${Math.abs(n).toFixed(2)}` : '—');

export const verdict = (ok: boolean): Verdict => (ok ? 'PASS' : 'MISS');

/** A row with only a figure in the ratio column (costs, issue 18's targets). */
export const ratioRow = (scenario: string, ratio: string, target: string, result: Verdict): Row => ({ scenario, rps: '', p50: '', p99: '', ratio, target, result });

export function table(rows: readonly Row[]): string {
  const columns = ['scenario', 'rps', 'p50', 'p99', 'ratio', 'target', 'result'] as const;
  const header: Record<(typeof columns)[number], string> = { scenario: 'scenario', rps: 'req/s', p50: 'p50 ms', p99: 'p99 ms', ratio: 'ratio to baseline', target: 'target', result: 'PASS/MISS' };
  const lines = [header, ...rows].map((row) => `| ${columns.map((c) => row[c]).join(' | ')} |`);
  lines.splice(1, 0, `|${columns.map((c) => (c === 'scenario' || c === 'target' ? ':---|' : '---:|')).join('')}`);
  return lines.join('\n');
}

/** Prints the table, the machine, the notes, and the JSON when asked. */
export function finish(options: Options, host: Machine, startedAt: number, log: (text: string) => void, parts: ReportParts): number {
  const { rows, notes, report } = parts;
  const elapsedS = (performance.now() - startedAt) / 1000;
  process.stdout.write(`\n${table(rows)}\n\n`);
  process.stdout.write(`machine: nproc ${host.nproc}, ${host.cpuModel}, node ${host.node}, ${host.memGiB} GiB; ${host.taskset ? 'servers pinned to core 0, generator to core 1' : 'not pinned (no taskset)'}\n`);
  if (options.load) process.stdout.write(`run: ${options.rounds} rounds × ${options.sliceS} s per scenario, ${options.connections} connections; ratios are medians of same-round ratios; ${elapsedS.toFixed(0)} s in all\n`);
  else process.stdout.write(`run: ${[options.flood ? 'flood' : '', options.scale ? 'scale' : ''].filter((p) => p !== '').join(' and ')} phase only; ${elapsedS.toFixed(0)} s in all\n`);
  for (const note of notes) process.stdout.write(`${note}\n`);
  if (options.json !== undefined) {
    writeFileSync(options.json, `${JSON.stringify({ ...report, elapsedS, rows, notes }, null, 2)}\n`);
    log(`wrote ${options.json}`);
  }
  return 0; // a MISS is a finding, not a failure of the bench: the table and the JSON say it
}
