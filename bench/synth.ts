import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from '../infra/bundling.ts';
import { bundlesRoot } from '../infra/lambda-bundles.ts';
import { withFileLockSync } from '../lib/local/file-lock.ts';

/**
 * Wall and CPU time of `cdk synth` as a developer runs it (tsx start, the stack, cdk-nag, the template, the assets):
 * first with every Lambda bundled anew (the shared build's folder removed, as on a fresh clone), then again reusing
 * those bundles, as every later synth whose handlers did not change does.
 */
export async function runSynthBench(): Promise<void> {
  withFileLockSync(`${bundlesRoot}.lock`, () => fs.rmSync(bundlesRoot, { recursive: true, force: true }));
  for (const label of ['bundles built', 'bundles reused']) {
    const result = await synthOnce();
    if (!result.ok) {
      console.log(
        `cdk synth (${label}) FAILED after ${result.seconds.toFixed(1)} s:\n${result.output.trim().split('\n').slice(-20).join('\n')}`,
      );
      return;
    }
    console.log(
      `cdk synth, ${label}: ${result.seconds.toFixed(1)} s wall, ${result.cpuSeconds.toFixed(1)} s CPU, ${result.assets} assets (load ${os.loadavg()[0]!.toFixed(1)})`,
    );
  }
}

async function synthOnce(): Promise<{ ok: boolean; seconds: number; cpuSeconds: number; assets: number; output: string }> {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-bench-synth-'));
  const cdk = path.join(repoRoot, 'node_modules', '.bin', 'cdk');
  const started = performance.now();
  // `time -f` is GNU time's; the shell's own `times` reports the CPU of its children (the synth and its esbuild).
  const script = `"${cdk}" synth --quiet --output "${outdir}" >/dev/null 2>"${outdir}.log"; code=$?; times; exit $code`;
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: repoRoot, env: process.env });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('close', (code) => resolve({ code, stdout }));
  });
  const seconds = (performance.now() - started) / 1000;
  // `times` prints the shell's user/system line, then its children's: "0m41.200s 0m9.800s".
  const children = stdout
    .trim()
    .split('\n')
    .at(-1)!
    .match(/(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/);
  const cpuSeconds = children ? Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4]) : NaN;
  const assets = fs.readdirSync(outdir).filter((f) => f.startsWith('asset.')).length;
  const output = fs.existsSync(`${outdir}.log`) ? fs.readFileSync(`${outdir}.log`, 'utf8') : '';
  fs.rmSync(outdir, { recursive: true, force: true });
  fs.rmSync(`${outdir}.log`, { force: true });
  return { ok: code === 0, seconds, cpuSeconds, assets, output };
}
