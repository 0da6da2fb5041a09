import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { acquireBuildSlot, releaseBuildSlot } from '../../lib/builds/build-slots.ts';
import { createGitProject, getSite, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { freshConfigHome, runCli } from '../support/cli.ts';
import { recordUserFailure } from '../../lib/builds/breaker-records.ts';

/**
 * A build's limits (docs/builds.md): the time budget (shortened here by
 * BUILD_TIME_BUDGET_MS), a newer push cancelling the branch's older build,
 * the log cap and the log's polling cursor, the per-team concurrency cap,
 * and the package store kept warm for an unchanged lockfile.
 */
const BUDGET_MS = 15_000;
const LOG_MAX = 40;
// Each test runs one or more real builds: seconds each, more on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });
const ctx = useBuildsSuite({ env: { BUILD_TIME_BUDGET_MS: String(BUDGET_MS), BUILD_LOG_MAX_LINES: String(LOG_MAX) } });

const push = async (secret: string, branch: string, sha: string) => (await ctx.push(secret, branch, sha)).body.data.builds[0];

/** No package.json: the build command alone, which waits `sleepMs` and prints `lines` lines first. */
const plainSite = (label: string, options: { sleepMs?: number; lines?: number } = {}) => ({
  'package.json': null,
  'package-lock.json': null,
  'build.mjs': [
    "import { mkdirSync, writeFileSync } from 'node:fs';",
    `for (let i = 0; i < ${options.lines ?? 0}; i++) console.log('line ' + i);`,
    `await new Promise((r) => setTimeout(r, ${options.sleepMs ?? 0}));`,
    "mkdirSync('dist', { recursive: true });",
    `writeFileSync('dist/index.html', '${label}');`,
  ].join('\n'),
});

describe('build limits', () => {
  it('stops a build that runs past its time budget and fails it', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url, framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' });
    const queued = await push(secret, 'slow', ctx.repo.commit('slow', plainSite('slow', { sleepMs: 120_000 })));
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    expect(build.status).toBe('failed');
    expect(build.failure_message).toBe('Build failed: it ran past its time budget of 15 seconds and was stopped.');
    expect(Date.parse(build.finished_at) - Date.parse(build.started_at)).toBeLessThan(BUDGET_MS + 10_000);
  });

  it('cancels the running build of a branch when a newer push to it arrives', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url, framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' });
    const older = await push(secret, 'main', ctx.repo.commit('main', plainSite('older', { sleepMs: 60_000 })));
    await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, older.deployment_id, ['building'], 30_000).catch(() => undefined);
    const newer = await push(secret, 'main', ctx.repo.commit('main', plainSite('newer')));
    const cancelled = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, older.deployment_id);
    expect(cancelled.status).toBe('canceled');
    const done = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, newer.deployment_id);
    expect(done.status, done.build_log.join('\n')).toBe('ready');
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('newer');
  });

  it('caps the log, and a running build can be followed with the log cursor', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url, framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' });
    const queued = await push(secret, 'chatty', ctx.repo.commit('chatty', plainSite('chatty', { lines: 100, sleepMs: 1500 })));
    const seen: string[] = [];
    let cursor = 0;
    for (let done = false; !done; ) {
      const page = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments/${queued.deployment_id}/log?cursor=${cursor}`, { token: ctx.roles.member.token });
      expect(page.status, page.text).toBe(200);
      expect(page.body.data.cursor).toBe(cursor);
      seen.push(...page.body.data.lines);
      cursor = page.body.data.next_cursor;
      done = page.body.data.done && page.body.data.lines.length === 0;
      if (!done) await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen).toHaveLength(LOG_MAX);
    expect(seen).toContain('line 0');
    expect(seen[LOG_MAX - 1]).toBe(`[slipway] The log is cut here: a build keeps ${LOG_MAX} lines. The build goes on.`);
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    expect(build.status).toBe('ready');
    expect(build.build_log).toEqual(seen);
    const bad = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments/${queued.deployment_id}/log?cursor=-1`, { token: ctx.roles.member.token });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('BUILD_LOG_CURSOR_INVALID');
  });

  it('the CLI starts a build, follows its log to the end, and resumes auto-deploy', async () => {
    const { project } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url, framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' });
    ctx.repo.commit('cli', plainSite('from the cli', { lines: 3, sleepMs: 1000 }));
    const env = { SLIPWAY_API_URL: ctx.platform.baseUrl, SLIPWAY_TOKEN: ctx.roles.admin.token, XDG_CONFIG_HOME: freshConfigHome() };
    const run = await runCli(['build', '--branch', 'cli', '--project', project.id, '--follow'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('line 2');
    expect(run.stdout).toContain('Published as a preview.');
    const id = /Queued build ([0-9a-f-]{36})/.exec(run.stderr)![1]!;
    const again = await runCli(['logs', '--build', id, '--project', project.id, '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'ready', lines: expect.arrayContaining(['line 0', 'line 1', 'line 2']) });
    for (let i = 0; i < 3; i++) await recordUserFailure(project.id, { message: 'Build failed: x', signature: 'x' });
    const resumed = await runCli(['auto-deploy', 'resume', '--project', project.id, '--json'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ auto_deploy_paused_at: null, consecutive_build_failures: 0 });
  });

  it('reuses the package store when the lockfile is unchanged', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url, build_command: 'npm run build', output_dir: 'dist' });
    const first = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, (await push(secret, 'cache', ctx.repo.commit('cache', staticSite('one')))).deployment_id);
    expect(first.build_log.find((l: string) => l.startsWith('Package cache:'))).toMatch(/^Package cache: cold \(package-lock\.json [0-9a-f]{8}\)$/);
    const second = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, (await push(secret, 'cache', ctx.repo.commit('cache', staticSite('two')))).deployment_id);
    expect(second.build_log.find((l: string) => l.startsWith('Package cache:'))).toMatch(/^Package cache: warm /);
    expect(second.status).toBe('ready');
  });

  it('holds a team to its concurrency cap, however many builds race for a place', async () => {
    const teamId = randomUUID();
    const builds = Array.from({ length: 8 }, () => randomUUID());
    const taken = await Promise.all(builds.map((id) => acquireBuildSlot(teamId, id, 2, 600)));
    expect(taken.filter(Boolean)).toHaveLength(2);
    const holder = builds[taken.indexOf(true)]!;
    await releaseBuildSlot(teamId, holder);
    expect(await acquireBuildSlot(teamId, builds[taken.indexOf(false)]!, 2, 600)).toBe(true);
  });
});
