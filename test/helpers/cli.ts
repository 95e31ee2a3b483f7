// The CLI as shipped (dist/cli/authgate.js, built first) run as a child process, for the tests that
// drive it against a real gateway. Never spawnSync: the gateway it calls runs in the test's process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/authgate.js', import.meta.url));

export type CliRun = { code: number | null; stdout: string; stderr: string };

/** Runs `authgate ARGS` with only PATH and `env` in its environment. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // Bounded, and generous: on a loaded machine a Node start alone takes seconds.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
