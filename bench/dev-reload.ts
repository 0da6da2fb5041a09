import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDevSite } from '../lib/local/dev-site.ts';

/**
 * `slipway dev`'s reload: the time from a function file saved to the first
 * answer carrying its new code, asked every 5 ms meanwhile, as a developer's
 * browser would ask right after saving. Median of REPEATS saves (goal: under
 * 300 ms). The first save of a run starts a fresh sandboxed instance for the new
 * build, as every save does.
 */
const REPEATS = Number(process.env.BENCH_DEV_RELOADS ?? 7);

function get(port: number, host: string): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', headers: { host }, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', () => resolve(''));
    req.end();
  });
}

export async function runDevReloadBench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-dev-'));
  mkdirSync(join(dir, 'functions'));
  writeFileSync(join(dir, 'index.html'), '<h1>dev</h1>');
  const source = (n: number) => `export default () => new Response('version ${n}');\n`;
  writeFileSync(join(dir, 'functions', 'api.ts'), source(0));
  const site = await startDevSite({ dir, subdomain: 'bench', port: 0, onLog: () => undefined });
  const host = `api-bench.fn.localhost:${site.port}`;
  const times: number[] = [];
  try {
    await get(site.port, host);
    for (let n = 1; n <= REPEATS; n++) {
      const saved = performance.now();
      writeFileSync(join(dir, 'functions', 'api.ts'), source(n));
      while ((await get(site.port, host)) !== `version ${n}`) {
        if (performance.now() - saved > 10_000) throw new Error(`version ${n} did not answer within 10 s`);
        await new Promise((r) => setTimeout(r, 5));
      }
      times.push(performance.now() - saved);
    }
  } finally {
    await site.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  console.log(`slipway dev: saved function file to its new answer, ${REPEATS} saves: ${times.map((t) => t.toFixed(0)).join(', ')} ms`);
  console.log(`  median ${median.toFixed(0)} ms (goal under 300 ms: ${median < 300 ? 'met' : 'missed'})`);
}
