import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../lib/local/api-server.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A config home of its own, so no test reads or writes the user's settings. */
export const freshConfigHome = () => mkdtempSync(join(tmpdir(), 'slipway-cli-'));

/**
 * Runs the user CLI as a user does, in a child process (`node --import tsx
 * lib/cli/main.ts ...`), asynchronously so the in-process platform keeps answering.
 */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string; input?: string } = {}): Promise<CliRun> {
  // tsx by its resolved URL: the child may run in a folder with no node_modules (cwd: a site).
  return runProgram(process.execPath, ['--import', import.meta.resolve('tsx'), join(repoRoot, 'lib/cli/main.ts'), ...args], env, options);
}

/** Runs a program with a clean environment (PATH, HOME and the given variables) and collects its output. */
export function runProgram(
  program: string,
  args: string[],
  env: Record<string, string>,
  options: { cwd?: string; input?: string } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, {
      cwd: options.cwd ?? repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        // The state file of a developer's running `npm run dev` must not leak into a test.
        SLIPWAY_STATE_FILE: join(tmpdir(), 'slipway-no-state.json'),
        SLIPWAY_RETRY_BASE_MS: '5',
        // Deploys cache file hashes (lib/cli/hash-cache.ts): in a folder of the tests', not the user's ~/.cache.
        XDG_CACHE_HOME: join(tmpdir(), 'slipway-test-cache'),
        // The record of a developer's running `npm run dev` (lib/local/state.ts) must not leak in either.
        XDG_STATE_HOME: join(tmpdir(), 'slipway-no-user-state'),
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
