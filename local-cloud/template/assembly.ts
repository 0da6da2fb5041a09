import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFileLock } from '../../lib/local/file-lock.ts';
import { localConfig } from '../../lib/local-config.ts';

// Not lib/local/api-server.ts's: vitest's global setup imports this file, and that one loads the API's modules.
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `cdk synth` writes (cdk.json has no `output`): the cloud assembly the synthesized mode runs. */
export function assemblyDir(): string {
  return localConfig.assemblyDir(join(repoRoot, 'cdk.out'));
}

const digestFile = 'slipway-sources.sha256';

/**
 * Context of the local synth. A CORS origin makes the HTTP API carry its CORS
 * configuration (API Gateway answers preflights from it); the platform then
 * answers with its own origins. Context changes no bundle.
 */
const synthContext = ['-c', 'corsOrigins=http://localhost:5173'];

/**
 * What a synthesized template is made from: the stack, the handlers and what
 * they import, the lockfile and cdk.json. lib/local/ is left out: no Lambda
 * bundles the local platform.
 */
export function sourcesDigest(root = repoRoot): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && relative(root, path) !== join('lib', 'local')) walk(path);
      } else if (!entry.name.includes('.test.')) {
        hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
      }
    }
  };
  for (const dir of ['infra', 'lib', 'handlers']) walk(join(root, dir));
  for (const file of ['package-lock.json', 'cdk.json']) hash.update(file).update(readFileSync(join(root, file)));
  hash.update(synthContext.join(' '));
  return hash.digest('hex');
}

export function isAssemblyCurrent(dir = assemblyDir()): boolean {
  const file = join(dir, digestFile);
  return existsSync(join(dir, 'manifest.json')) && existsSync(file) && readFileSync(file, 'utf8').trim() === sourcesDigest();
}

/**
 * The cloud assembly of the current sources: reused when its recorded digest
 * matches, else made by `cdk synth --quiet` (every Lambda bundled: minutes on a
 * busy machine, so an up-to-date cdk.out is never made again). Callers in
 * several processes at once (the test run's setup and its test files) wait for
 * the one synthesis under way and reuse it.
 */
export async function ensureSynthesized(log: (line: string) => void = () => undefined): Promise<string> {
  const dir = assemblyDir();
  if (isAssemblyCurrent(dir)) return dir;
  return withFileLock(`${dir}.lock`, async () => (isAssemblyCurrent(dir) ? dir : synthesize(dir, log)));
}

async function synthesize(dir: string, log: (line: string) => void): Promise<string> {
  const digest = sourcesDigest();
  log(`Synthesizing the stack into ${dir} (cdk synth)...`);
  const started = performance.now();
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(join(repoRoot, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', ...synthContext, '--output', dir], {
      cwd: repoRoot,
      env: process.env,
    });
    let text = '';
    child.stdout.on('data', (chunk) => (text += chunk));
    child.stderr.on('data', (chunk) => (text += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`cdk synth failed (exit ${code}):\n${text.split('\n').slice(-25).join('\n')}`)),
    );
  });
  void output;
  writeFileSync(join(dir, digestFile), `${digest}\n`);
  log(`Synthesized in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
  return dir;
}
