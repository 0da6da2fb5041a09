import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * The runner's folder: in the repository, lib/functions/runner/; in the built CLI (dist/cli.mjs and its
 * chunks, where this module's URL is no longer under lib/), the copy bin/build-cli.mjs puts in dist/runner/.
 * The runner is runner.mjs and the modules beside it (RUNNER_FILES); task.mjs is the Fargate task's entry.
 */
export const RUNNER_DIR =
  [fileURLToPath(new URL('./runner/', import.meta.url)), fileURLToPath(new URL('../runner/', import.meta.url))].find(
    (path) => basename(dirname(path)) === 'dist' && existsSync(join(path, 'runner.mjs')),
  ) ?? join(repoRoot, 'lib/functions/runner');
export const RUNNER_PATH = join(RUNNER_DIR, 'runner.mjs');
/** The runner's files every sandbox gets (read-only), beside one another. */
export const RUNNER_FILES = ['runner.mjs', 'core.mjs', 'serve.mjs', 'setup.mjs', 'protocol.mjs'] as const;

/** Makes the host's temp folder, with a copy of the runner's files that nobody can write. */
export function makeSandboxRoot(): { root: string; runnerDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'slipway-functions-'));
  // The sandboxed user must traverse it (mkdtemp makes it 0700).
  chmodSync(root, 0o711);
  const runnerDir = join(root, 'runner');
  mkdirSync(runnerDir, { mode: 0o755 });
  chmodSync(runnerDir, 0o755);
  for (const file of RUNNER_FILES) {
    copyFileSync(join(RUNNER_DIR, file), join(runnerDir, file));
    chmodSync(join(runnerDir, file), 0o644);
  }
  return { root, runnerDir };
}
