import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../lib/local/api-server.ts';
import { withFileLockSync } from '../../lib/local/file-lock.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A config home of its own, so no test reads or writes the user's settings. */
export const freshConfigHome = () => mkdtempSync(join(tmpdir(), 'slipway-cli-'));

const cliBundle = join(repoRoot, 'dist', 'cli.mjs');
let cliChecked = false;

/** True when dist/cli.mjs exists and no file it was built from (dist/cli-inputs.json) changed after it. */
function cliIsCurrent(): boolean {
  const built = statSync(cliBundle, { throwIfNoEntry: false });
  if (!built) return false;
  let inputs: string[];
  try {
    inputs = JSON.parse(readFileSync(join(repoRoot, 'dist', 'cli-inputs.json'), 'utf8')) as string[];
  } catch {
    return false;
  }
  return inputs.every(
    (file) => (statSync(join(repoRoot, file), { throwIfNoEntry: false })?.mtimeMs ?? Number.POSITIVE_INFINITY) <= built.mtimeMs,
  );
}

/**
 * The installable CLI, dist/cli.mjs, as `npm ci` builds it (bin/build-cli.mjs), rebuilt first when a source of it
 * is newer (a test run after an edit). A user runs this file; it starts in a quarter of the CPU of the sources
 * under tsx (0.12 against 0.5 CPU-s a command, about 100 commands a run).
 */
export function cliEntry(): string {
  if (!cliChecked) {
    withFileLockSync(join(repoRoot, '.cli-build.lock'), () => {
      if (cliIsCurrent()) return;
      const build = spawnSync(process.execPath, [join(repoRoot, 'bin', 'build-cli.mjs')], { cwd: repoRoot, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`bin/build-cli.mjs failed: ${build.stderr}`);
    });
    cliChecked = true;
  }
  return cliBundle;
}

/**
 * Runs the user CLI as a user does, in a child process (`node dist/cli.mjs ...`), asynchronously so the
 * in-process platform keeps answering.
 */
export function runCli(args: string[], env: Record<string, string>, options: { cwd?: string; input?: string } = {}): Promise<CliRun> {
  return runProgram(process.execPath, [cliEntry(), ...args], env, options);
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
