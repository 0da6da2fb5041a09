import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { bundleRuntimeEnvironment, containerHandlers, esbuildOptions, repoRoot } from '../infra/bundling.ts';
import { fallbackRoute, routeKey, routes, type RouteRow } from '../lib/http/routes.ts';
import { bucketDefinitions, queueDefinitions, scheduleGroupDefinition, tableDefinition } from '../lib/resources.ts';
import { workers } from '../lib/workers.ts';

/** Targets of the cold path (issue 2): an API handler's bundle, and importing any bundle in a fresh process. */
export const targets = { apiBundleKb: 350, importMs: 80 } as const;

const outDir = path.join(repoRoot, 'bench', '.out', 'handlers');
/** Fresh processes per bundle; the median damps a busy machine. */
const runs = Number(process.env.BENCH_RUNS ?? 7);

interface Entry {
  kind: 'api' | 'worker' | 'edge';
  name: string;
  handler: string;
  /**
   * A container-image worker (a browser's driver) or a container handler (the container door): its import is
   * printed but not held to the import target, since its cold start is the browser's (unpacking Chromium takes
   * about a second) or it starts once per task.
   */
  image?: boolean;
}

function entries(): Entry[] {
  const list: Entry[] = [
    ...(routes as readonly RouteRow[]).map((row) => ({ kind: 'api' as const, name: routeKey(row), handler: row.handler })),
    { kind: 'api', name: '$default', handler: fallbackRoute.handler },
    ...workers.map((row) => ({ kind: 'worker' as const, name: row.name, handler: row.handler, image: Boolean(row.image) })),
  ];
  // Handlers the stack wires outside the two tables (site serving behind CloudFront).
  const edgeDir = path.join(repoRoot, 'handlers', 'edge');
  if (fs.existsSync(edgeDir)) {
    for (const file of fs
      .readdirSync(edgeDir)
      .filter((f) => f.endsWith('.ts'))
      .sort()) {
      const handler = `handlers/edge/${file}`;
      // The container door is a long-lived Fargate process, not a Lambda: its import is printed, not held to the target.
      list.push({ kind: 'edge', name: file.replace(/\.ts$/, ''), handler, image: containerHandlers.has(handler) });
    }
  }
  return list;
}

/** What the stack gives every function, with placeholder values: a module reading its config at import finds it. */
function lambdaLikeEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    [tableDefinition.envVar]: 'bench-table',
    [scheduleGroupDefinition.envVar]: 'bench-group',
    [scheduleGroupDefinition.roleEnvVar]: 'arn:aws:iam::000000000000:role/bench',
    ...bundleRuntimeEnvironment,
  };
  for (const b of Object.values(bucketDefinitions)) env[b.envVar] = `bench-${b.id.toLowerCase()}`;
  for (const q of Object.values(queueDefinitions)) env[q.envVar] = `https://sqs.us-east-1.amazonaws.com/000000000000/${q.id}`;
  return env;
}

/** The time one fresh Node process spends in `await import(bundle)`, in ms. */
function importOnce(file: string, env: NodeJS.ProcessEnv): Promise<number> {
  const script = 'const t = performance.now(); await import(process.argv[1]); console.log(performance.now() - t);';
  return new Promise((resolve, reject) => {
    // NODE_OPTIONS (--enable-source-maps) comes through env, as on Lambda.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, pathToFileURL(file).href], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number.parseFloat(stdout.trim().split('\n').pop() ?? '');
      if (code === 0 && Number.isFinite(ms)) resolve(ms);
      else reject(new Error(`import of ${path.basename(file)} failed (exit ${code}): ${stderr.trim().split('\n').slice(0, 3).join(' ')}`));
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface Result extends Entry {
  kb: number | null;
  importMs: number | null;
  error?: string;
}

/** Bundles every handler exactly as the stack does (infra/bundling.ts), then times importing each bundle. */
export async function runHandlersBench(): Promise<void> {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const env = lambdaLikeEnvironment();
  const results: Result[] = [];

  for (const entry of entries()) {
    const outfile = path.join(
      outDir,
      `${entry.handler
        .replace(/^handlers\//, '')
        .replace(/\.ts$/, '')
        .replaceAll('/', '__')}.mjs`,
    );
    try {
      await esbuild.build(esbuildOptions(entry.handler, outfile));
    } catch (error) {
      results.push({ ...entry, kb: null, importMs: null, error: `bundle failed: ${(error as Error).message.split('\n')[0]}` });
      continue;
    }
    const kb = fs.statSync(outfile).size / 1024;
    try {
      const times: number[] = [];
      for (let i = 0; i < runs; i++) times.push(await importOnce(outfile, env));
      results.push({ ...entry, kb, importMs: median(times) });
    } catch (error) {
      results.push({ ...entry, kb, importMs: null, error: (error as Error).message });
    }
  }

  const verdict = (value: number | null, target: number | null) =>
    value === null || target === null ? '' : value <= target ? 'PASS' : 'OVER';
  const rows = results.map((r) => {
    const sizeTarget = r.kind === 'api' ? targets.apiBundleKb : null;
    return [
      r.kind,
      r.name,
      r.kb === null ? '-' : r.kb.toFixed(1),
      verdict(r.kb, sizeTarget) || (sizeTarget === null ? 'n/a' : '-'),
      r.importMs === null ? '-' : r.importMs.toFixed(1),
      r.image ? 'n/a' : verdict(r.importMs, targets.importMs) || '-',
      r.error ?? '',
    ];
  });
  const header = ['kind', 'handler', 'KB', `<=${targets.apiBundleKb}KB`, 'import ms', `<=${targets.importMs}ms`, ''];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 2 || i === 4 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  console.log(
    `${results.length} bundles, minified ESM (infra/bundling.ts); import time = median of ${runs} fresh \`node\` processes, source maps on as deployed`,
  );
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));

  const api = results.filter((r) => r.kind === 'api' && r.kb !== null);
  const timed = results.filter((r) => r.importMs !== null && !r.image);
  const images = results.filter((r) => r.image).map((r) => `${r.name} ${r.importMs === null ? '-' : r.importMs.toFixed(1)} ms`);
  const overSize = api.filter((r) => r.kb! > targets.apiBundleKb).length;
  const overTime = timed.filter((r) => r.importMs! > targets.importMs).length;
  const failed = results.filter((r) => r.error).length;
  const range = (values: number[], digits: number) =>
    values.length
      ? `${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)} (median ${median(values).toFixed(digits)})`
      : '-';
  console.log(
    `\nAPI bundle size: ${range(
      api.map((r) => r.kb!),
      1,
    )} KB, ${overSize}/${api.length} OVER ${targets.apiBundleKb} KB` +
      `\nimport time: ${range(
        timed.map((r) => r.importMs!),
        1,
      )} ms, ${overTime}/${timed.length} OVER ${targets.importMs} ms` +
      (images.length ? ` (container images not counted: ${images.join(', ')})` : '') +
      (failed ? `\n${failed} handler(s) failed to bundle or import (see the last column)` : ''),
  );
  fs.writeFileSync(path.join(outDir, 'results.json'), `${JSON.stringify({ runs, targets, results }, null, 2)}\n`);
}
