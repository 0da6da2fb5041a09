import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { githubSignature } from '../lib/builds/webhooks/github.ts';
import { createApiKey } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/users/user-records.ts';
import { startLocalPlatform, type LocalPlatform } from '../lib/local/platform.ts';
import { localParts } from '../lib/local/wiring.ts';
import { setTeamPlan } from '../lib/teams/standing.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { siteRequest } from '../test/support/sites.ts';
import { startGitServer, type GitServer } from '../test/support/git-server.ts';
import { githubPushPayload } from '../test/support/webhooks.ts';

/**
 * Builds on this machine, fully sandboxed, from a repository served by `git http-backend` on loopback:
 * - push to live: a GitHub push webhook sent, to the site serving the new commit (polled every 20 ms),
 *   for a small static site with no dependencies, median of 5; beside it the build command's own time
 *   (the build script's `The build command took N ms.`). Goal: at most 2 s beyond the build command.
 * - cold and warm package cache, same run: a site with a few real dependencies (packed from this
 *   repository's node_modules into the site's `vendor/`, so nothing reaches the network), built with an
 *   empty store, then again with the same lockfile.
 */
export const targets = { overheadMs: 2000 } as const;
const RUNS = Number(process.env.BENCH_BUILD_RUNS ?? 5);
const PACKAGES = ['dotenv', 'mime', 'picomatch', 'p-limit', 'yocto-queue'];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ctx {
  platform: LocalPlatform;
  repo: GitServer;
  token: string;
}

/** fetch, once more when a kept-alive connection the server closed meanwhile is reset under it (an idle gap of seconds). */
async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    return fetch(url, init);
  }
}

async function api(ctx: Ctx, method: string, path: string, body?: unknown): Promise<any> {
  const res = await send(`${ctx.platform.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${ctx.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const parsed = (await res.json()) as { data: any };
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed.data;
}

async function connectedProject(ctx: Ctx, settings: Record<string, unknown>): Promise<{ id: string; subdomain: string; secret: string }> {
  const project = await api(ctx, 'POST', '/api/v1/projects', {
    name: `Bench ${randomBytes(3).toString('hex')}`,
    git_repo_url: ctx.repo.url,
    default_branch: 'main',
    auto_deploy_enabled: true,
    ...settings,
  });
  const { secret } = await api(ctx, 'POST', `/api/v1/projects/${project.id}/git/webhook-secret`);
  return { id: project.id, subdomain: project.subdomain, secret };
}

async function push(ctx: Ctx, secret: string, branch: string, sha: string): Promise<string> {
  const body = JSON.stringify(githubPushPayload({ repoUrl: ctx.repo.url, branch, sha }));
  const res = await send(`${ctx.platform.baseUrl}/api/v1/webhooks/git/github`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': githubSignature(secret, body),
    },
    body,
  });
  const reply = (await res.json()) as { data: { builds: { deployment_id: string }[] } };
  return reply.data.builds[0]!.deployment_id;
}

async function finished(ctx: Ctx, projectId: string, deploymentId: string): Promise<{ status: string; build_log: string[] }> {
  for (;;) {
    const build = await api(ctx, 'GET', `/api/v1/projects/${projectId}/deployments/${deploymentId}`);
    if (build.finished_at) return build;
    await sleep(100);
  }
}

const msFrom = (log: string[], pattern: RegExp) => Number(log.map((l) => pattern.exec(l)?.[1]).find(Boolean) ?? NaN);

async function pushToLive(ctx: Ctx): Promise<void> {
  const project = await connectedProject(ctx, { framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' });
  const totals: number[] = [];
  const commands: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const marker = `v${i}-${randomBytes(3).toString('hex')}`;
    const sha = ctx.repo.commit('main', {
      'build.mjs': `import { mkdirSync, writeFileSync } from 'node:fs'; mkdirSync('dist', { recursive: true }); writeFileSync('dist/index.html', '${marker}');`,
    });
    const started = performance.now();
    const deploymentId = await push(ctx, project.secret, 'main', sha);
    for (;;) {
      const site = await siteRequest(ctx.platform.port, `${project.subdomain}.localhost:${ctx.platform.port}`, '/');
      if (site.text === marker) break;
      await sleep(20);
    }
    totals.push(performance.now() - started);
    const build = await finished(ctx, project.id, deploymentId);
    commands.push(msFrom(build.build_log, /^The build command took (\d+) ms\.$/));
  }
  const overhead = totals.map((t, i) => t - commands[i]!);
  console.log(`push to live, static site without dependencies (median of ${RUNS}): ${(median(totals) / 1000).toFixed(2)} s`);
  console.log(
    `  of which the build command: ${(median(commands) / 1000).toFixed(2)} s; the rest (webhook, queue, fetch, sandbox, publish): ${(median(overhead) / 1000).toFixed(2)} s (goal <= ${targets.overheadMs / 1000} s) ${median(overhead) <= targets.overheadMs ? 'MET' : 'MISSED'}`,
  );
  console.log(`  each run: ${totals.map((t) => (t / 1000).toFixed(2)).join(', ')} s`);
}

/** A site depending on a few real packages, packed from this repository's node_modules into its vendor/ folder, with its lockfile. */
function dependencySite(): Record<string, string | Buffer> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-bench-deps-'));
  try {
    const vendor = join(dir, 'vendor');
    spawnSync('mkdir', ['-p', vendor]);
    for (const name of PACKAGES)
      spawnSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', vendor, join(process.cwd(), 'node_modules', name)], {
        encoding: 'utf8',
      });
    const tarballs = readdirSync(vendor);
    const dependencies = Object.fromEntries(
      PACKAGES.map((name) => [name, `file:vendor/${tarballs.find((t) => t.startsWith(`${name}-`))}`]),
    );
    const manifest = JSON.stringify({
      name: 'bench-deps',
      version: '1.0.0',
      private: true,
      scripts: { build: 'node build.mjs' },
      dependencies,
    });
    spawnSync(
      'sh',
      [
        '-c',
        `cat > package.json <<'EOF'\n${manifest}\nEOF\nnpm install --package-lock-only --ignore-scripts --no-audit --no-fund --offline`,
      ],
      { cwd: dir, encoding: 'utf8' },
    );
    const files: Record<string, string | Buffer> = {
      'package.json': manifest,
      'package-lock.json': readFileSync(join(dir, 'package-lock.json'), 'utf8'),
      'build.mjs':
        "import { mkdirSync, writeFileSync } from 'node:fs'; import mime from 'mime'; mkdirSync('dist', { recursive: true }); writeFileSync('dist/index.html', mime.getType('a.html'));",
    };
    for (const tarball of tarballs) files[`vendor/${tarball}`] = readFileSync(join(vendor, tarball));
    return files;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function packageCache(ctx: Ctx): Promise<void> {
  const project = await connectedProject(ctx, { framework: 'vite', build_command: 'npm run build', output_dir: 'dist' });
  const site = dependencySite();
  const results: { cache: string; installMs: number; totalMs: number }[] = [];
  for (const label of ['first', 'second']) {
    const sha = ctx.repo.commit('deps', { ...site, 'note.txt': label });
    const started = performance.now();
    const build = await finished(ctx, project.id, await push(ctx, project.secret, 'deps', sha));
    if (build.status !== 'ready')
      throw new Error(`the ${label} dependency build ${build.status}: ${build.build_log.slice(-5).join(' | ')}`);
    const cache = build.build_log.find((l) => l.startsWith('Package cache:')) ?? '?';
    results.push({ cache, installMs: msFrom(build.build_log, /^Install took (\d+) ms\.$/), totalMs: performance.now() - started });
  }
  console.log(`package cache, ${PACKAGES.length} packages from a local folder (npm ci), same run:`);
  for (const r of results)
    console.log(`  ${r.cache}: install ${(r.installMs / 1000).toFixed(2)} s, push to ready ${(r.totalMs / 1000).toFixed(2)} s`);
}

export async function runBuildsBench(): Promise<void> {
  process.env.GIT_ALLOW_LOOPBACK_HTTP = 'true';
  process.env.BUILD_POLL_MS ??= '100';
  process.env.BUILD_CACHE_DIR = mkdtempSync(join(tmpdir(), 'slipway-bench-cache-'));
  const parts = localParts();
  const platform = await startLocalPlatform({
    port: 0,
    prefix: `benchb${randomBytes(3).toString('hex')}`,
    hostnameHandlers: parts.hostnameHandlers,
    drivers: parts.drivers,
  });
  const repo = await startGitServer({ name: 'bench' });
  try {
    const user = await createUser({ email: `bench-${randomUUID()}@example.test`, name: 'Bench' });
    const team = await createTeam({ name: `Bench ${randomBytes(3).toString('hex')}`, ownerUserId: user.user_id });
    await setTeamPlan(team.id, 'team');
    const ctx = { platform, repo, token: await createApiKey(team.id) };
    await pushToLive(ctx);
    await packageCache(ctx);
  } finally {
    await repo.close();
    await platform.stop();
    rmSync(process.env.BUILD_CACHE_DIR, { recursive: true, force: true });
  }
}
