import { describe, expect, it, vi } from 'vitest';
import { BREAKER_THRESHOLD, PAUSE_REASON, recordUserFailure } from '../../lib/builds/breaker-records.ts';
import { setTeamSuspended } from '../../lib/teams/standing.ts';
import { createGitProject, getSite, PLAIN_BUILD, plainStaticSite, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { makeTeamWithRoles } from '../support/platform.ts';

/**
 * Failed builds (docs/builds.md): a lockfile out of step, a build command that
 * fails, the breaker that pauses auto-deploy at 3 failures of one signature
 * and its resume, a failed build publishing nothing, and a suspended team.
 */
// Each test runs one or more real builds: seconds each, more on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });
const ctx = useBuildsSuite({ functions: true });

const push = async (secret: string, sha: string) => (await ctx.push(secret, 'main', sha)).body.data;

const projectOf = async (id: string) =>
  (await ctx.platform.api('GET', `/api/v1/projects/${id}`, { token: ctx.roles.member.token })).body.data;

/** A site whose build fails with the same error each time, after printing a changing number. */
const failingSite = () => ({
  'package.json': null,
  'package-lock.json': null,
  'build.mjs':
    "console.log('run ' + Date.now()); console.error('Error: Cannot find module ./missing-' + process.pid + '.js'); process.exit(2);",
});

/** Pushes `site` (made distinct per push) BREAKER_THRESHOLD times: each fails with `message`, counts, and the last pauses auto-deploy. */
async function tripsTheBreaker(site: Record<string, string | null>, message: string | RegExp) {
  const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
    git_repo_url: ctx.repo.url,
    framework: 'other',
    build_command: 'node build.mjs',
    output_dir: 'dist',
  });
  const messages: string[] = [];
  for (let i = 1; i <= BREAKER_THRESHOLD; i++) {
    const sha = ctx.repo.commit('main', { ...site, [`n${i}.txt`]: String(i) });
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, (await push(secret, sha)).builds[0].deployment_id);
    expect(build.status, build.build_log.join('\n')).toBe('failed');
    expect(build.failure_message).toMatch(message);
    const state = await projectOf(project.id);
    expect(state.consecutive_build_failures).toBe(i);
    expect(state.last_build_failure_message).toBe(build.failure_message);
    expect(state.auto_deploy_paused_at === null).toBe(i < BREAKER_THRESHOLD);
    messages.push(build.failure_message);
  }
  expect((await projectOf(project.id)).auto_deploy_pause_reason).toBe(PAUSE_REASON);
  expect((await projectOf(project.id)).live_deployment_id).toBeNull();
  return messages;
}

/** A build command that writes `files` into dist/ (no package.json: no install). */
const outputSite = (files: Record<string, string>) => ({
  'package.json': null,
  'package-lock.json': null,
  'build.mjs': [
    "import { mkdirSync, writeFileSync } from 'node:fs';",
    "mkdirSync('dist', { recursive: true });",
    ...Object.entries(files).map(([path, text]) => `writeFileSync('dist/${path}', ${JSON.stringify(text)});`),
  ].join('\n'),
});

describe('failed builds', () => {
  it('fails a build whose lockfile is out of step with package.json, with a clear line, and publishes nothing', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      build_command: 'npm run build',
      output_dir: 'dist',
    });
    const good = await push(secret, ctx.repo.commit('main', staticSite('good')));
    expect((await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, good.builds[0].deployment_id)).status).toBe('ready');
    // A dependency on a folder of the repository: npm ci finds the lockfile out of step without any network.
    const site = staticSite('bad', { 'local-dep/package.json': JSON.stringify({ name: 'local-dep', version: '1.0.0' }) });
    const manifest = JSON.parse(site['package.json']!);
    manifest.dependencies = { 'local-dep': 'file:./local-dep' };
    const sha = ctx.repo.commit('main', { ...site, 'package.json': JSON.stringify(manifest) });
    const failed = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, (await push(secret, sha)).builds[0].deployment_id);
    expect(failed.status).toBe('failed');
    expect(failed.failure_message).toBe(
      'Install failed: package-lock.json is out of step with package.json; update the lockfile and push again.',
    );
    expect(failed.build_log).toContain(failed.failure_message);
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('<h1>good no greeting</h1>');
    const after = await projectOf(project.id);
    expect(after.live_deployment_id).toBe(good.builds[0].deployment_id);
    expect(after.consecutive_build_failures).toBe(1);
    expect(after.last_build_failure_message).toBe(failed.failure_message);
  });

  it('trips the breaker at 3 failures of one signature, skips pushes while paused, and resumes', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      framework: 'other',
      build_command: 'node build.mjs',
      output_dir: 'dist',
    });
    for (let i = 1; i <= BREAKER_THRESHOLD; i++) {
      const sha = ctx.repo.commit('main', { ...failingSite(), [`n${i}.txt`]: String(i) });
      const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, (await push(secret, sha)).builds[0].deployment_id);
      expect(build.status).toBe('failed');
      expect(build.failure_message).toMatch(/^Build failed: `node build\.mjs` exited with code 2: Error: Cannot find module/);
      const state = await projectOf(project.id);
      expect(state.consecutive_build_failures).toBe(i);
      expect(state.auto_deploy_paused_at === null).toBe(i < BREAKER_THRESHOLD);
    }
    const paused = await projectOf(project.id);
    expect(paused.auto_deploy_pause_reason).toBe(PAUSE_REASON);
    expect(paused.last_build_failure_message).toMatch(/^Build failed: `node build\.mjs` exited with code 2/);
    const skipped = await push(secret, ctx.repo.commit('main', staticSite('fixed')));
    expect(skipped.builds).toEqual([expect.objectContaining({ status: 'skipped', skip_reason: 'auto_deploy_paused' })]);

    // A general update never writes the breaker, whatever it carries.
    const patched = await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
      token: ctx.roles.admin.token,
      body: {
        ...paused,
        auto_deploy_paused_at: null,
        consecutive_build_failures: 0,
        last_build_failure_message: null,
        name: `${paused.name} 2`,
      },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data.auto_deploy_paused_at).toBe(paused.auto_deploy_paused_at);
    expect(patched.body.data.consecutive_build_failures).toBe(BREAKER_THRESHOLD);

    const resumed = await ctx.platform.api('POST', `/api/v1/projects/${project.id}/auto-deploy/resume`, { token: ctx.roles.admin.token });
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.body.data).toMatchObject({
      auto_deploy_paused_at: null,
      auto_deploy_pause_reason: null,
      consecutive_build_failures: 0,
      last_build_failure_message: null,
    });
    const member = await ctx.platform.api('POST', `/api/v1/projects/${project.id}/auto-deploy/resume`, { token: ctx.roles.member.token });
    expect(member.status).toBe(403);
  });

  it('restarts the count at 1 for another signature; a settings save racing build outcomes never loses one', async () => {
    const { project } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url });
    await recordUserFailure(project.id, { message: 'Build failed: a', signature: 'a' });
    await recordUserFailure(project.id, { message: 'Build failed: b', signature: 'b' });
    expect((await projectOf(project.id)).consecutive_build_failures).toBe(1);
    await Promise.all([
      ...Array.from({ length: 4 }, () => recordUserFailure(project.id, { message: 'Build failed: b', signature: 'b' })),
      ...Array.from({ length: 4 }, (_, i) =>
        ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
          token: ctx.roles.admin.token,
          body: { build_command: `make ${i}`, consecutive_build_failures: 0 },
        }),
      ),
    ]);
    const after = await projectOf(project.id);
    expect(after.consecutive_build_failures).toBe(5);
    expect(after.auto_deploy_pause_reason).toBe(PAUSE_REASON);
  });

  it('a successful manual build clears the breaker; the API starts builds for team admins only', async () => {
    // No install (plainStaticSite): the subject is the breaker, not npm.
    const { project } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url, ...PLAIN_BUILD });
    for (let i = 0; i < BREAKER_THRESHOLD; i++) await recordUserFailure(project.id, { message: 'Build failed: x', signature: 'x' });
    expect((await projectOf(project.id)).auto_deploy_paused_at).toBeTruthy();
    const sha = ctx.repo.commit('main', plainStaticSite('manual'));
    expect(
      (await ctx.platform.api('POST', `/api/v1/projects/${project.id}/builds`, { token: ctx.roles.member.token, body: { branch: 'main' } }))
        .status,
    ).toBe(403);
    const bad = await ctx.platform.api('POST', `/api/v1/projects/${project.id}/builds`, {
      token: ctx.roles.admin.token,
      body: { branch: 'a..b' },
    });
    expect(bad.status).toBe(400);
    const started = await ctx.platform.api('POST', `/api/v1/projects/${project.id}/builds`, {
      token: ctx.roles.admin.token,
      body: { branch: 'main' },
    });
    expect(started.status, started.text).toBe(202);
    expect(started.body.data).toMatchObject({
      trigger: 'manual',
      target: 'production',
      branch: 'main',
      commit_sha: null,
      status: 'queued',
    });
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, started.body.data.deployment_id);
    expect(build.status, build.build_log.join('\n')).toBe('ready');
    expect(build.commit_sha).toBe(sha);
    expect(await projectOf(project.id)).toMatchObject({ auto_deploy_paused_at: null, consecutive_build_failures: 0 });
  });

  it('builds nothing for a project whose team is suspended', async () => {
    const other = await makeTeamWithRoles();
    const { project, secret } = await createGitProject(ctx.platform, other.admin.token, { git_repo_url: ctx.repo.url });
    await setTeamSuspended(other.team.id, true);
    const reply = await push(secret, ctx.repo.commit('main', staticSite('suspended')));
    expect(reply.builds.filter((b: { project_id: string }) => b.project_id === project.id)).toEqual([]);
    expect(reply.ignored).toContainEqual({ project_id: project.id, reason: 'team_suspended' });
    const listed = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments`, { token: other.admin.token });
    expect(listed.body.data.deployments).toEqual([]);
  });

  it('counts an output that is not publishable, with its classified line, and trips the breaker at 3', async () => {
    const messages = await tripsTheBreaker(outputSite({ 'index.php': '<?php echo "hi";' }), /^Not publishable \(UPLOAD_PHP_SITE\): /);
    expect(new Set(messages).size).toBe(1);
  });

  it('counts a functions build failure, with its classified line (never the bundler output), and trips the breaker at 3', async () => {
    const site = { ...outputSite({ 'index.html': '<h1>with a broken function</h1>' }), 'functions/x.js': 'export default (request => {' };
    const messages = await tripsTheBreaker(site, /^\[functions\] Build failed: /);
    expect(messages[0]).toBe('[functions] Build failed: functions/x.js could not be bundled');
  });
});
