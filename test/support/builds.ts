import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { setFunctionsEnrolment, setTeamPlan } from '../../lib/teams/standing.ts';
import { startGitServer, type GitServer } from './git-server.ts';
import { makeTeamWithRoles, startTestPlatform, type ApiReply, type TestPlatform } from './platform.ts';
import { siteRequest } from './sites.ts';
import { until } from './wait.ts';
import { githubPushPayload, sendGithub, type PushInput } from './webhooks.ts';

/**
 * What the builds tests share: the platform settings that let a build fetch a
 * repository served on loopback and keep its waits short, a tiny site whose
 * build needs no network, and waiting for a build to end.
 */
export function useBuildSettings(overrides: Record<string, string> = {}): void {
  process.env.GIT_ALLOW_LOOPBACK_HTTP = 'true';
  process.env.BUILD_POLL_MS = '100';
  process.env.BUILD_REQUEUE_DELAY_SECONDS = '1';
  process.env.BUILD_CACHE_DIR = mkdtempSync(join(tmpdir(), 'slipway-build-cache-test-'));
  Object.assign(process.env, overrides);
}

/** A site with no dependencies: `npm run build` writes dist/ (its page names the branch and GREETING). */
export function staticSite(label: string, extra: Record<string, string> = {}, output: Record<string, string> = {}): Record<string, string> {
  return {
    'package.json': JSON.stringify({ name: 'fixture-site', version: '1.0.0', private: true, scripts: { build: 'node build.mjs' } }),
    'package-lock.json': JSON.stringify({
      name: 'fixture-site',
      version: '1.0.0',
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'fixture-site', version: '1.0.0' } },
    }),
    'build.mjs': [
      "import { mkdirSync, writeFileSync } from 'node:fs';",
      "mkdirSync('dist', { recursive: true });",
      "console.log('building with API_TOKEN=' + process.env.API_TOKEN);",
      `writeFileSync('dist/index.html', '<h1>${label} ' + (process.env.GREETING ?? 'no greeting') + '</h1>');`,
      // Files the build writes as they are into its output folder (dist/_redirects, say).
      ...Object.entries(output).map(([path, content]) => `writeFileSync(${JSON.stringify(`dist/${path}`)}, ${JSON.stringify(content)});`),
    ].join('\n'),
    ...extra,
  };
}

/**
 * staticSite with no package.json or lockfile: the build command (`node build.mjs`, framework `other`) runs with no
 * install, so a test whose subject is not the install skips npm's two starts per build.
 */
export function plainStaticSite(label: string, extra: Record<string, string> = {}, output: Record<string, string> = {}) {
  return { ...staticSite(label, extra, output), 'package.json': null, 'package-lock.json': null };
}

/** Project settings that build plainStaticSite. */
export const PLAIN_BUILD = { framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' } as const;

export interface BuildsSuite {
  platform: TestPlatform;
  /** A repository served over Git's smart HTTP protocol on loopback (test/support/git-server.ts). */
  repo: GitServer;
  roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
  /** A GitHub push of `sha` to `branch` of the suite's repository, signed with `secret`. */
  push(secret: string, branch: string, sha: string | null, extra?: Partial<PushInput> & { delivery?: string }): Promise<ApiReply>;
}

/**
 * The setup every builds test file shares: the build settings (with `env` over them), a
 * platform, a Git server and a team with its roles (on the team plan: more than the free
 * plan's five projects; functions enrolled when asked), stopped after the file. The
 * fields are filled in before the file's first test.
 */
export function useBuildsSuite(options: { env?: Record<string, string>; functions?: boolean } = {}): BuildsSuite {
  const suite = {} as BuildsSuite;
  beforeAll(async () => {
    useBuildSettings(options.env);
    suite.platform = await startTestPlatform();
    suite.repo = await startGitServer();
    suite.roles = await makeTeamWithRoles();
    await setTeamPlan(suite.roles.team.id, 'team');
    if (options.functions) await setFunctionsEnrolment(suite.roles.team.id, true);
  });
  afterAll(async () => {
    await suite.repo?.close();
    await suite.platform?.stop();
  });
  suite.push = (secret, branch, sha, extra = {}) =>
    sendGithub(suite.platform, {
      event: 'push',
      secret,
      delivery: extra.delivery,
      payload: githubPushPayload({ repoUrl: suite.repo.url, branch, sha, ...extra }),
    });
  return suite;
}

export async function createGitProject(
  platform: TestPlatform,
  token: string,
  settings: Record<string, unknown>,
): Promise<{ project: Record<string, any>; secret: string }> {
  const created = await platform.api('POST', '/api/v1/projects', {
    token,
    body: {
      name: `Built ${Math.random().toString(36).slice(2, 8)}`,
      default_branch: 'main',
      auto_deploy_enabled: true,
      framework: 'vite',
      ...settings,
    },
  });
  expect(created.status, created.text).toBe(201);
  const secret = await platform.api('POST', `/api/v1/projects/${created.body.data.id}/git/webhook-secret`, { token });
  expect(secret.status, secret.text).toBe(200);
  return { project: created.body.data, secret: secret.body.data.secret };
}

/** Polls a deployment until its status is one of `statuses`. */
export async function waitForBuild(
  platform: TestPlatform,
  token: string,
  projectId: string,
  deploymentId: string,
  statuses: string[] = ['ready', 'failed', 'canceled', 'skipped'],
  timeoutMs = 60_000,
): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const reply = await platform.api('GET', `/api/v1/projects/${projectId}/deployments/${deploymentId}`, { token });
    // A finished build has its finish time: the worker's last write, after the publish's own.
    const settled = reply.status === 200 && statuses.includes(reply.body.data.status);
    const terminal = ['ready', 'failed', 'canceled', 'skipped'].includes(reply.body.data?.status);
    if (settled && (!terminal || reply.body.data.finished_at || reply.body.data.trigger === null)) return reply.body.data;
    if (Date.now() > until) throw new Error(`build ${deploymentId} did not reach ${statuses.join('/')}: ${reply.text.slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** GET on a site host of the local platform (`Host` set, the connection to 127.0.0.1). */
export async function getSite(platform: TestPlatform, host: string, path = '/'): Promise<{ status: number; text: string }> {
  const reply = await siteRequest(platform.port, `${host}:${platform.port}`, path);
  return { status: reply.status, text: reply.text };
}

/**
 * A build held running until the test lets it end: its command (no package.json, so no install) waits for a file
 * `open()` writes into its checkout, then writes dist/index.html with `label`. A test that needs a build still
 * running while it looks at others waits for that state instead of guessing how long a sleep covers on a busy
 * machine. The checkout is found on this machine by a file named after a random marker: the local build host's
 * workspaces are folders `slipway-builds-*` of the temporary directory (lib/local/builds/local-build-host.ts).
 */
export function gatedSite(label: string): { files: Record<string, string | null>; open(): Promise<void> } {
  const marker = `gate-${randomBytes(6).toString('hex')}`;
  const files = {
    'package.json': null,
    'package-lock.json': null,
    [marker]: 'held until the test opens the gate',
    'build.mjs': [
      "import { existsSync, mkdirSync, writeFileSync } from 'node:fs';",
      `while (!existsSync('${marker}.open')) await new Promise((r) => setTimeout(r, 50));`,
      "mkdirSync('dist', { recursive: true });",
      `writeFileSync('dist/index.html', '${label}');`,
    ].join('\n'),
  };
  const checkout = (): string | undefined => {
    for (const root of readdirSync(tmpdir()).filter((name) => name.startsWith('slipway-builds-'))) {
      let runs: string[] = [];
      try {
        runs = readdirSync(join(tmpdir(), root));
      } catch {
        continue;
      }
      for (const run of runs) if (existsSync(join(tmpdir(), root, run, 'src', marker))) return join(tmpdir(), root, run, 'src');
    }
    return undefined;
  };
  return {
    files,
    async open() {
      // Fetched once the build is `building` and its workspace made: waited for, not assumed.
      await until(async () => checkout() !== undefined, `the checkout of the gated build ${label}`);
      writeFileSync(join(checkout()!, `${marker}.open`), '', { mode: 0o644 });
    },
  };
}
