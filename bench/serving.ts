import { spawn, execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApiKey } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/users/user-records.ts';
import { repoRoot } from '../lib/local/api-server.ts';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { freePort } from '../lib/local/ports.ts';
import { localParts } from '../lib/local/wiring.ts';
import { deploymentFiles } from '../lib/sites/deployment-files.ts';
import { siteObjects } from '../lib/sites/serving-cache.ts';
import { compileServingRules } from '../lib/sites/serving-rules.ts';
import { serveSiteFiles } from '../lib/sites/site-files.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { runDevReloadBench } from './dev-reload.ts';
import { deploySiteFiles } from './support.ts';

/**
 * Serving figures (issue 21): a cached page of a published site on the local
 * platform ({subdomain}.localhost, moto_server of its own) with 10 keep-alive
 * connections, beside sirv-cli (a bare static server, a dev dependency)
 * serving the same file in the same run; then `slipway dev`'s time from a
 * saved function file to its new answer. Goals: at least 1,000 requests/s for
 * the page, under 300 ms for the reload. The load comes from bench/load.mjs in
 * a process of its own.
 *
 * Serving rules (issue 35): on one platform, a site whose `_redirects` holds 2,000 rules (and `_headers` 100
 * blocks) beside the same site without them, for a page no rule matches and for a path with no file that no rule
 * matches either (every rule is then a candidate). Goal: with rules, at least 0.9 of the rate without. The two sites
 * take turns, so a busy moment of the machine falls on both.
 */
const SECONDS = Number(process.env.BENCH_SERVING_SECONDS ?? 10);
const CONNECTIONS = 10;
const PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head>' +
  `<body>${'<p>Lorem ipsum dolor sit amet.</p>'.repeat(120)}</body></html>\n`;

interface LoadFigures {
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  statuses: Record<string, number>;
}

async function load(url: string, host: string, seconds = SECONDS): Promise<LoadFigures> {
  const args = [join(repoRoot, 'bench', 'load.mjs'), url, host, String(seconds), String(CONNECTIONS)];
  const { stdout } = await promisify(execFile)(process.execPath, args);
  return JSON.parse(stdout) as LoadFigures;
}

const line = (name: string, f: LoadFigures) =>
  `${name.padEnd(34)} ${f.rps.toFixed(0).padStart(6)} req/s   p50 ${f.p50_ms.toFixed(2)} ms   p99 ${f.p99_ms.toFixed(2)} ms   ` +
  `(${f.requests} requests, statuses ${JSON.stringify(f.statuses)}, ${f.errors} errors)`;

async function platformFigures(): Promise<LoadFigures> {
  const parts = localParts();
  const prefix = `serve${randomBytes(3).toString('hex')}`;
  const platform = await startLocalPlatform({ port: 0, prefix, hostnameHandlers: parts.hostnameHandlers, drivers: [] });
  try {
    const user = await createUser({ email: `bench-${randomUUID()}@example.test`, name: 'Bench' });
    const team = await createTeam({ name: `Bench ${randomBytes(3).toString('hex')}`, ownerUserId: user.user_id });
    const token = await createApiKey(team.id);
    const subdomain = `serve-${randomBytes(3).toString('hex')}`;
    await deploySiteFiles(platform.baseUrl, token, { 'index.html': PAGE }, { name: subdomain, subdomain });
    const host = `${subdomain}.localhost:${platform.port}`;
    // One request first: the page is then served from memory, as a page anyone visits is.
    await load(`http://127.0.0.1:${platform.port}/`, host).catch(() => undefined);
    return await load(`http://127.0.0.1:${platform.port}/`, host);
  } finally {
    await platform.stop();
  }
}

/** 2,000 rules of the shapes sites use: moved sections (splat), placeholders, forced ones; none matches `/`. */
function manyRules(): { redirects: string; headers: string } {
  const redirects: string[] = [];
  for (let i = 0; i < 2000; i++) {
    if (i % 20 === 0) redirects.push(`/:lang/legacy-${i} /new-${i} 301!`);
    else if (i % 3 === 0) redirects.push(`/old-${i}/* /new-${i}/:splat 301`);
    else if (i % 3 === 1) redirects.push(`/blog-${i}/:slug /posts-${i}/:slug 302`);
    else redirects.push(`/page-${i} /pages/${i} 308`);
  }
  const headers: string[] = [];
  for (let i = 0; i < 100; i++) headers.push(`/section-${i}/*`, `  X-Section: ${i}`);
  return { redirects: redirects.join('\n'), headers: headers.join('\n') };
}

/**
 * The serving step alone, in this process (no network, no load generator): serveSiteFiles over the same manifest
 * with and without the compiled rules, objects in memory. Microseconds a request, with rules and without.
 */
async function servingStepMicros(path: string): Promise<{ with: number; without: number }> {
  const rules = manyRules();
  const fact = (hash: string, body: string) => {
    siteObjects.set(hash, Buffer.from(body));
    return { hash, size: Buffer.byteLength(body), content_type: 'text/html; charset=utf-8' };
  };
  const base = {
    project_slug: 'bench',
    project_id: 'bench',
    team_id: 'bench',
    deployment_id: 'bench',
    created_at: '',
    files: { 'index.html': fact('bench-index', PAGE), '404.html': fact('bench-404', '<h1>Not here</h1>') },
  };
  const manifests = { with: { ...base, serving_rules: compileServingRules(rules) }, without: base };
  const request = { host: 'bench.localhost', path, method: 'GET', headers: {} };
  const out = { with: 0, without: 0 };
  const rounds = 20_000;
  // Alternating rounds, as the HTTP figures do.
  for (let turn = 0; turn < 4; turn++) {
    for (const kind of ['with', 'without'] as const) {
      const files = deploymentFiles(manifests[kind], '');
      const started = performance.now();
      for (let i = 0; i < rounds; i++) await serveSiteFiles(request, files);
      out[kind] += ((performance.now() - started) * 1000) / rounds / 4;
    }
  }
  return out;
}

async function rulesFigures(): Promise<void> {
  const parts = localParts();
  const prefix = `rules${randomBytes(3).toString('hex')}`;
  const platform = await startLocalPlatform({ port: 0, prefix, hostnameHandlers: parts.hostnameHandlers, drivers: [] });
  try {
    const user = await createUser({ email: `bench-${randomUUID()}@example.test`, name: 'Bench' });
    const team = await createTeam({ name: `Bench ${randomBytes(3).toString('hex')}`, ownerUserId: user.user_id });
    const token = await createApiKey(team.id);
    const hosts: Record<'with' | 'without', string> = { with: '', without: '' };
    for (const kind of ['without', 'with'] as const) {
      const subdomain = `rules-${kind}-${randomBytes(3).toString('hex')}`;
      const rules = manyRules();
      const files = {
        'index.html': PAGE,
        '404.html': '<h1>Not here</h1>',
        ...(kind === 'with' ? { _redirects: rules.redirects, _headers: rules.headers } : {}),
      };
      await deploySiteFiles(platform.baseUrl, token, files, { name: subdomain, subdomain });
      hosts[kind] = `${subdomain}.localhost:${platform.port}`;
    }
    for (const path of ['/', '/no-such-page']) {
      const runs: Record<'with' | 'without', LoadFigures[]> = { with: [], without: [] };
      for (const kind of ['with', 'without'] as const)
        await load(`http://127.0.0.1:${platform.port}${path}`, hosts[kind]).catch(() => undefined);
      // Turns of a quarter of the time each, alternating: a busy moment of the machine falls on both sites.
      for (let turn = 0; turn < 4; turn++) {
        for (const kind of turn % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
          runs[kind].push(await load(`http://127.0.0.1:${platform.port}${path}`, hosts[kind], SECONDS / 4));
        }
      }
      const rate = (list: LoadFigures[]) => list.reduce((sum, f) => sum + f.requests, 0) / (list.length * (SECONDS / 4));
      const withRules = rate(runs.with);
      const without = rate(runs.without);
      const status = (list: LoadFigures[]) => JSON.stringify(list.map((f) => f.statuses));
      console.log(`${`${path} with 2,000 rules`.padEnd(34)} ${withRules.toFixed(0).padStart(6)} req/s   (statuses ${status(runs.with)})`);
      console.log(`${`${path} without rules`.padEnd(34)} ${without.toFixed(0).padStart(6)} req/s   (statuses ${status(runs.without)})`);
      const ratio = withRules / without;
      console.log(`${path}: with rules / without: ${ratio.toFixed(2)}; goal 0.9: ${ratio >= 0.9 ? 'met' : 'missed'}`);
      const step = await servingStepMicros(path);
      console.log(
        `${path}: the serving step alone (serveSiteFiles in this process): ${step.with.toFixed(1)} µs with rules, ` +
          `${step.without.toFixed(1)} µs without (ratio of rates ${(step.without / step.with).toFixed(2)})`,
      );
    }
  } finally {
    await platform.stop();
  }
}

async function sirvFigures(): Promise<LoadFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-sirv-'));
  writeFileSync(join(dir, 'index.html'), PAGE);
  const port = await freePort();
  const bin = join(repoRoot, 'node_modules', 'sirv-cli', 'bin.js');
  const sirv = spawn(process.execPath, [bin, dir, '--port', String(port), '--host', '127.0.0.1', '--quiet'], { stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return await load(`http://127.0.0.1:${port}/`, `127.0.0.1:${port}`);
  } finally {
    sirv.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runServingBench(): Promise<void> {
  console.log(`A ${PAGE.length}-byte page, ${CONNECTIONS} connections, ${SECONDS} s each (goal: at least 1,000 req/s on the platform).`);
  const platform = await platformFigures();
  console.log(line('local platform ({subdomain}.localhost)', platform));
  const bare = await sirvFigures();
  console.log(line('sirv-cli (bare static server)', bare));
  console.log(`platform / bare: ${(platform.rps / bare.rps).toFixed(2)}; goal 1,000 req/s: ${platform.rps >= 1000 ? 'met' : 'missed'}`);
  console.log('\nServing rules: the same site with and without 2,000 _redirects rules (and 100 _headers blocks).');
  await rulesFigures();
  await runDevReloadBench();
}
