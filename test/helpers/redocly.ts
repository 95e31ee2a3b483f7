import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Redocly's CLI on an OpenAPI document file, with the repository's redocly.yaml (the recommended
 * rules). Offline: no telemetry, no update check, and a bounded run.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const redocly = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');

export type LintReport = { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; location?: { pointer?: string }[] }[] };

export function lint(file: string): Promise<LintReport> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      [redocly, 'lint', '--config', join(root, 'redocly.yaml'), '--format=json', file],
      {
        cwd: root,
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      },
      (error, stdout, stderr) => {
        // A finding exits 1 with the report on stdout; no report at all is the failure.
        const start = stdout.indexOf('{');
        if (start === -1) return fail(new Error(`redocly gave no report (${error?.message ?? 'no error'}): ${stderr.slice(0, 2000)}`));
        try {
          done(JSON.parse(stdout.slice(start)) as LintReport);
        } catch (parseError) {
          fail(parseError);
        }
      },
    );
  });
}

/** The findings of a report, one line each: none is a clean document. */
export const findingsOf = (report: LintReport) => report.problems.map((p) => `${p.ruleId} at ${p.location?.[0]?.pointer ?? '?'}: ${p.message}`);
