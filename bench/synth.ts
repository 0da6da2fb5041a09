import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../infra/bundling.ts';

/** Wall time of one `cdk synth` (tsx start, every handler bundled by esbuild, cdk-nag, template), as a developer runs it. */
export async function runSynthBench(): Promise<void> {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-bench-synth-'));
  const cdk = path.join(repoRoot, 'node_modules', '.bin', 'cdk');
  const started = performance.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(cdk, ['synth', '--quiet', '--output', outdir], { cwd: repoRoot, env: process.env });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
  const seconds = (performance.now() - started) / 1000;
  const assets = fs.existsSync(outdir) ? fs.readdirSync(outdir).filter((f) => f.startsWith('asset.')).length : 0;
  fs.rmSync(outdir, { recursive: true, force: true });
  if (code !== 0) {
    console.log(`cdk synth FAILED (exit ${code}) after ${seconds.toFixed(1)} s:\n${output.trim().split('\n').slice(-20).join('\n')}`);
    return;
  }
  console.log(`cdk synth: ${seconds.toFixed(1)} s wall, ${assets} assets bundled`);
}
