import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { acquireBuildSlot, releaseBuildSlot } from '../../lib/builds/build-slot-records.ts';
import { createGitProject, gatedSite, getSite, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { freshConfigHome, runCli } from '../support/cli.ts';
import { withEnv } from '../support/env.ts';
import { scaled } from '../support/wait.ts';
import { recordUserFailure } from '../../lib/builds/breaker-records.ts';
import { claimBuild, finishBuild, getBuild, recordQueuedBuild } from '../../lib/builds/build-records.ts';
import { settleIfLost } from '../../lib/builds/lost.ts';
import { startGitServer } from '../support/git-server.ts';
import { makeTeamWithRoles } from '../support/platform.ts';
import { githubPushPayload, sendGithub } from '../support/webhooks.ts';

/**
 * A build's limits (docs/builds.md): the time budget (shortened here by
 * BUILD_TIME_BUDGET_MS), a newer push cancelling the branch's older build,
 * the log cap and the log's polling cursor, the per-team concurrency cap,
 * and the package store kept warm for an unchanged lockfile.
 */
// Every build here ends on its own within seconds; the file's budget only ends one that would not, and must not end
// one that a loaded machine slows (the budget itself is tested with a budget of its own, SHORT_BUDGET_MS).
const BUDGET_MS = scaled(90_000);
// The budget the stopped build gets: its command sleeps far past it, so any budget is passed; the shorter, the sooner.
const SHORT_BUDGET_MS = 2_000;
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

const projectOf = async (id: string) =>
  (await ctx.platform.api('GET', `/api/v1/projects/${id}`, { token: ctx.roles.member.token })).body.data;

describe('build limits', () => {
  it('stops a build that runs past its time budget and fails it', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
    // A budget of 2 s for this build alone (read while it runs): the file's budget leaves the other builds room on a
    // loaded machine, and this one would wait all of it.
    const build = await withEnv({ BUILD_TIME_BUDGET_MS: String(SHORT_BUDGET_MS) }, async () => {
      const queued = await push(secret, 'slow', ctx.repo.commit('slow', plainSite('slow', { sleepMs: 120_000 })));
      return waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    });
    expect(build.status).toBe('failed');
    expect(build.failure_message).toBe('Build failed: it ran past its time budget of 2 seconds and was stopped.');
    // Stopped at its budget, not at the command's end (120 s): the margin is the follow's poll and the stop, scaled.
    expect(Date.parse(build.finished_at) - Date.parse(build.started_at)).toBeLessThan(SHORT_BUDGET_MS + scaled(10_000));
  });

  it('a step silent for the heartbeat interval prints that it is still running and for how long', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
    // 1 s for this build alone (read as its job is made); the default is 30 s.
    const build = await withEnv({ BUILD_HEARTBEAT_MS: '1000' }, async () => {
      const queued = await push(secret, 'quiet', ctx.repo.commit('quiet', plainSite('quiet', { sleepMs: 2_500 })));
      return waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    });
    expect(build.status, build.build_log.join('\n')).toBe('ready');
    // Every silent step gets its beats: on a busy machine the checkout can be silent for a second too.
    const allBeats = build.build_log.filter((line: string) => line.startsWith('Still running: '));
    for (const line of allBeats) expect(line).toMatch(/^Still running: `[^`]+` has printed nothing for \d+ s \(\d+ s in all\)\.$/);
    const beats = allBeats.filter((line: string) => line.startsWith('Still running: `node build.mjs` '));
    expect(beats.length, build.build_log.join('\n')).toBeGreaterThanOrEqual(2);
    expect(beats[0]).toMatch(/for 1 s \(1 s in all\)\.$/);
  });

  it('a build whose install is refused says which connection its egress refused, and fails within a minute with a clear line', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'npm run build',
      output_dir: 'dist',
    });
    // A registry on loopback: the build's egress proxy refuses it (only public addresses), so no packet leaves the machine.
    const registry = 'https://127.0.0.1/';
    const dependency = {
      version: '1.3.0',
      resolved: `${registry}left-pad/-/left-pad-1.3.0.tgz`,
      integrity: 'sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQm2NrxxTfd8BtYj4YdnjdYqPWJ2x+eDN9bK7b8z8oTGNPiA==',
    };
    const manifest = { name: 'refused-site', version: '1.0.0', private: true, dependencies: { 'left-pad': '1.3.0' } };
    const site = {
      ...staticSite('refused'),
      '.npmrc': `registry=${registry}\n`,
      'package.json': JSON.stringify({ ...manifest, scripts: { build: 'node build.mjs' } }),
      'package-lock.json': JSON.stringify({
        ...manifest,
        lockfileVersion: 3,
        requires: true,
        packages: { '': manifest, 'node_modules/left-pad': dependency },
      }),
    };
    const build = await withEnv({ BUILD_TIME_BUDGET_MS: '60000' }, async () => {
      const queued = await push(secret, 'refused', ctx.repo.commit('refused', site));
      return waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    });
    expect(build.status).toBe('failed');
    expect(build.build_log).toContain(
      'Outbound connection to 127.0.0.1:443 refused: The host resolves to a loopback address, which is blocked.',
    );
    expect(build.failure_message).toBe(
      "Install failed: the package registry could not be reached: the build's egress rule refused 127.0.0.1:443: The host resolves to a loopback address, which is blocked.",
    );
    expect(build.build_log.at(-1)).toBe(build.failure_message);
    expect(Date.parse(build.finished_at) - Date.parse(build.started_at)).toBeLessThan(scaled(60_000));
  });

  it('cancels the running build of a branch when a newer push to it arrives', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
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
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
    const queued = await push(secret, 'chatty', ctx.repo.commit('chatty', plainSite('chatty', { lines: 100, sleepMs: 1500 })));
    const seen: string[] = [];
    let cursor = 0;
    for (let done = false; !done; ) {
      const page = await ctx.platform.api(
        'GET',
        `/api/v1/projects/${project.id}/deployments/${queued.deployment_id}/log?cursor=${cursor}`,
        { token: ctx.roles.member.token },
      );
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
    const bad = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments/${queued.deployment_id}/log?cursor=-1`, {
      token: ctx.roles.member.token,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('BUILD_LOG_CURSOR_INVALID');
  });

  it('the CLI starts a build, follows its log to the end, and resumes auto-deploy', async () => {
    const { project } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
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
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      build_command: 'npm run build',
      output_dir: 'dist',
    });
    const first = await waitForBuild(
      ctx.platform,
      ctx.roles.member.token,
      project.id,
      (await push(secret, 'cache', ctx.repo.commit('cache', staticSite('one')))).deployment_id,
    );
    expect(first.build_log.find((l: string) => l.startsWith('Package cache:'))).toMatch(
      /^Package cache: cold \(package-lock\.json [0-9a-f]{8}\)$/,
    );
    const second = await waitForBuild(
      ctx.platform,
      ctx.roles.member.token,
      project.id,
      (await push(secret, 'cache', ctx.repo.commit('cache', staticSite('two')))).deployment_id,
    );
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

  it('fails a build that runs out of its memory cap with a classified line; the live deployment stays', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
    const good = await waitForBuild(
      ctx.platform,
      ctx.roles.member.token,
      project.id,
      (await push(secret, 'main', ctx.repo.commit('main', plainSite('kept')))).deployment_id,
    );
    expect(good.status, good.build_log.join('\n')).toBe('ready');
    // Buffers written to (an unwritten one holds no memory) until the cgroup's OOM killer ends the process.
    const hog = { ...plainSite('never'), 'build.mjs': 'const held = []; for (;;) held.push(Buffer.alloc(8 << 20, 1));' };
    const failed = await withEnv({ BUILD_MEMORY_MB: '128' }, async () =>
      waitForBuild(
        ctx.platform,
        ctx.roles.member.token,
        project.id,
        (await push(secret, 'main', ctx.repo.commit('main', hog))).deployment_id,
      ),
    );
    expect(failed.status).toBe('failed');
    expect(failed.failure_message).toBe('Build failed: it ran out of memory (builds have 128 MB).');
    expect(failed.build_log.at(-1)).toBe(failed.failure_message);
    const after = await projectOf(project.id);
    expect(after.live_deployment_id).toBe(good.id);
    expect(after.last_build_failure_message).toBe(failed.failure_message);
    expect(after.consecutive_build_failures).toBe(1);
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('kept');
  });

  it("holds a team's second build queued until its first ends, while another team's build runs", async () => {
    const other = await makeTeamWithRoles();
    const repos = await Promise.all(['cap-a1', 'cap-a2', 'cap-b'].map((name) => startGitServer({ name })));
    try {
      const settings = { framework: 'other', build_command: 'node build.mjs', output_dir: 'dist' };
      const [a1, a2, b] = await Promise.all([
        createGitProject(ctx.platform, ctx.roles.admin.token, { ...settings, git_repo_url: repos[0]!.url }),
        createGitProject(ctx.platform, ctx.roles.admin.token, { ...settings, git_repo_url: repos[1]!.url }),
        createGitProject(ctx.platform, other.admin.token, { ...settings, git_repo_url: repos[2]!.url }),
      ]);
      const pushTo = async (i: number, secret: string, site: Record<string, string | null>) =>
        (
          await sendGithub(ctx.platform, {
            event: 'push',
            secret,
            payload: githubPushPayload({ repoUrl: repos[i]!.url, branch: 'main', sha: repos[i]!.commit('main', site) }),
          })
        ).body.data.builds[0].deployment_id as string;
      // The first build runs until the others have been seen (the team's second queued, the other team's started).
      const gate = gatedSite('first');
      const [first, second, elsewhere] = await withEnv({ BUILD_CONCURRENCY_PER_TEAM: '1' }, async () => {
        const first = await pushTo(0, a1.secret, gate.files);
        await waitForBuild(ctx.platform, ctx.roles.member.token, a1.project.id, first, ['building']);
        const second = await pushTo(1, a2.secret, plainSite('second'));
        const elsewhere = await pushTo(2, b.secret, plainSite('elsewhere'));
        const running = await waitForBuild(ctx.platform, other.member.token, b.project.id, elsewhere, ['building', 'ready']);
        expect(
          (await waitForBuild(ctx.platform, ctx.roles.member.token, a2.project.id, second, ['queued', 'building', 'ready'])).status,
        ).toBe('queued');
        expect(running.started_at).toBeTruthy();
        expect((await waitForBuild(ctx.platform, ctx.roles.member.token, a1.project.id, first, ['building', 'ready'])).status).toBe(
          'building',
        );
        await gate.open();
        return Promise.all([
          waitForBuild(ctx.platform, ctx.roles.member.token, a1.project.id, first),
          waitForBuild(ctx.platform, ctx.roles.member.token, a2.project.id, second),
          waitForBuild(ctx.platform, other.member.token, b.project.id, elsewhere),
        ]);
      });
      expect([first.status, second.status, elsewhere.status], [first, second, elsewhere].map((b) => b.failure_message).join('\n')).toEqual([
        'ready',
        'ready',
        'ready',
      ]);
      // The other team's build started while the first ran; the team's second only once the first had ended.
      expect(Date.parse(elsewhere.started_at)).toBeLessThan(Date.parse(first.finished_at));
      expect(Date.parse(second.started_at)).toBeGreaterThanOrEqual(Date.parse(first.finished_at));
    } finally {
      await Promise.all(repos.map((repo) => repo.close()));
    }
  });

  it('ends a build whose worker was lost once its budget and grace have passed, and its follower ends with it', async () => {
    const { project } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url });
    // A claimed build that no worker follows: what a worker that died mid-build leaves.
    const lostBuild = async () => {
      const deploymentId = randomUUID();
      const build = {
        projectId: project.id,
        teamId: ctx.roles.team.id,
        deploymentId,
        trigger: 'manual' as const,
        target: 'production' as const,
      };
      await recordQueuedBuild({
        ...build,
        branch: `lost-${deploymentId}`,
        commitSha: null,
        commitMessage: null,
        label: null,
        mergeRequest: null,
      });
      expect(await claimBuild(project.id, deploymentId)).toBe(true);
      return deploymentId;
    };
    const id = await lostBuild();
    const env = { SLIPWAY_API_URL: ctx.platform.baseUrl, SLIPWAY_TOKEN: ctx.roles.admin.token, XDG_CONFIG_HOME: freshConfigHome() };
    const line =
      'The build stopped reporting and was ended 1 second past its time budget of 1 second. This is a platform issue; please retry.';
    await withEnv({ BUILD_TIME_BUDGET_MS: '1000', BUILD_LOST_GRACE_MS: '1000' }, async () => {
      const follow = await runCli(['logs', '--build', id, '--project', project.id, '--follow'], env);
      expect(follow.code, follow.stderr).toBe(1);
      expect(follow.stdout.trim().split('\n')).toEqual([line]);
      expect(follow.stderr).toContain(`Build ${id}: failed`);
      const ended = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, id);
      expect(ended).toMatchObject({ status: 'failed', failure_message: line, build_log: [line] });
      // A platform failure: the breaker does not count it.
      expect((await projectOf(project.id)).consecutive_build_failures).toBe(0);

      // A late real finish racing the end of a lost build: one outcome, whichever wins. Three races, each on a build
      // of its own, run side by side: one wait for their budget and grace (2 s past the last one's start) for all.
      const raced = await Promise.all([lostBuild(), lostBuild(), lostBuild()]);
      const lastStart = Math.max(
        ...(await Promise.all(raced.map(async (id) => Date.parse((await getBuild(project.id, id))!.started_at as string)))),
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastStart + 2100 - Date.now())));
      await Promise.all(
        raced.map(async (id) => {
          const [late] = await Promise.all([
            finishBuild(project.id, id, { status: 'failed', failure: { kind: 'user', message: 'Build failed: late' } }),
            getBuild(project.id, id).then((item) => settleIfLost(item!)),
          ]);
          const final = (await getBuild(project.id, id))!;
          expect(final.status).toBe('failed');
          expect(final.failure_message).toBe(late ? 'Build failed: late' : line);
          expect(typeof final.lost_at === 'string').toBe(!late);
        }),
      );
    });
  });
});
