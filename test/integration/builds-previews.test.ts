import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createGitProject, getSite, PLAIN_BUILD, plainStaticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { freshConfigHome, runCli } from '../support/cli.ts';
import { githubPullRequestPayload, gitlabMergeRequestPayload, sendGithub, sendGitlab } from '../support/webhooks.ts';

/**
 * Previews (docs/builds.md): which pushes build a preview, preview hosts and
 * their slug, merge-request previews, `[skip ci]`, a deleted production
 * branch, redelivered webhooks. Builds that the rules refuse are checked by
 * the webhook's answer and by the deployments listing: nothing was built.
 */
// Each test runs one or more real builds: seconds each, more on a loaded machine. Their sites have no package.json
// (plainStaticSite): what is tested here is which pushes build and where they are served, not the install.
vi.setConfig({ testTimeout: 120_000 });
const ctx = useBuildsSuite({ functions: true });

const deploymentsOf = async (projectId: string) =>
  (await ctx.platform.api('GET', `/api/v1/projects/${projectId}/deployments`, { token: ctx.roles.member.token })).body.data
    .deployments as Record<string, any>[];

const FUNCTION = {
  'functions/env.js':
    "export default (request, context) => Response.json({ context: Object.keys(context.env), process: Object.keys(process.env).filter((k) => k.includes('TOKEN')) });",
};

describe('branch pushes', () => {
  it('builds a preview of another branch: served on its preview host, live untouched, no functions; production deploys functions without the variables', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      ...PLAIN_BUILD,
    });
    await ctx.platform.api('PUT', `/api/v1/projects/${project.id}/env/API_TOKEN`, {
      token: ctx.roles.admin.token,
      body: { value: 'prod-token-9876', environment: 'production' },
    });
    await ctx.platform.api('PUT', `/api/v1/projects/${project.id}/env/GREETING`, {
      token: ctx.roles.admin.token,
      body: { value: 'preview-hi', environment: 'preview' },
    });
    const mainSha = ctx.repo.commit('main', plainStaticSite('main', FUNCTION));
    const live = (await ctx.push(secret, 'main', mainSha)).body.data.builds[0];
    const liveBuild = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, live.deployment_id);
    expect(liveBuild.status, liveBuild.build_log.join('\n')).toBe('ready');
    const fn = await getSite(ctx.platform, `env-${project.subdomain}.fn.localhost`);
    expect(fn.status).toBe(200);
    expect(JSON.parse(fn.text)).toEqual({ context: [], process: [] });

    // The build's output folder holds serving rules: compiled at publish as an upload's are, served on the preview host.
    const rules = { _redirects: '/* /index.html 200\n/x /y 999\n', _headers: '/*\n  X-Frame-Options: DENY\n' };
    const sha = ctx.repo.commit('Feature/New_Look', plainStaticSite('feature', FUNCTION, rules));
    const reply = await ctx.push(secret, 'Feature/New_Look', sha);
    expect(reply.status, reply.text).toBe(202);
    const queued = reply.body.data.builds[0];
    expect(queued).toMatchObject({ target: 'preview', branch: 'Feature/New_Look' });
    const projectNow = (await ctx.platform.api('GET', `/api/v1/projects/${project.id}`, { token: ctx.roles.member.token })).body.data;
    expect(projectNow.preview_slug).toMatch(/^[a-z0-9]{3,20}$/);
    const host = `feature-new-look-${projectNow.preview_slug}.previews.localhost`;
    expect(queued.preview_url).toBe(`http://${host}:${ctx.platform.port}`);

    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    expect(build.status, build.build_log.join('\n')).toBe('ready');
    expect(build.is_live).toBe(false);
    expect(build.preview_url).toBe(queued.preview_url);
    expect(await getSite(ctx.platform, host)).toEqual({ status: 200, text: '<h1>feature preview-hi</h1>' });
    expect(await getSite(ctx.platform, host, '/client/route')).toEqual({ status: 200, text: '<h1>feature preview-hi</h1>' });
    expect((await getSite(ctx.platform, host, '/_redirects')).status).toBe(404);
    const detail = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments/${queued.deployment_id}`, {
      token: ctx.roles.member.token,
    });
    expect(detail.body.data.serving_rules).toEqual({
      redirects: 1,
      headers: 1,
      skipped: [
        { file: '_redirects', line: 2, reason: '999 is not a status of a rule (200, 301, 302, 303, 307, 308 or 404, with an optional !)' },
      ],
      skipped_count: 1,
    });
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('<h1>main no greeting</h1>');
    const functions = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/functions`, { token: ctx.roles.member.token });
    expect(functions.body.data.functions.map((f: { name: string }) => f.name)).toEqual(['env']);
    expect(functions.body.data.functions[0].deployment_id ?? live.deployment_id).toBe(live.deployment_id);

    // A new slug moves every preview host at once.
    const patched = await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
      token: ctx.roles.admin.token,
      body: { preview_slug: 'renamed42' },
    });
    expect(patched.status, patched.text).toBe(200);
    expect((await getSite(ctx.platform, host)).status).toBe(404);
    expect((await getSite(ctx.platform, 'feature-new-look-renamed42.previews.localhost')).status).toBe(200);
    const listed = (await deploymentsOf(project.id)).find((d) => d.id === queued.deployment_id)!;
    expect(listed.preview_url).toBe(`http://feature-new-look-renamed42.previews.localhost:${ctx.platform.port}`);

    // Deleting the branch takes its preview down.
    ctx.repo.deleteBranch('Feature/New_Look');
    const deleted = await ctx.push(secret, 'Feature/New_Look', null, { deleted: true });
    expect(deleted.body.data.ignored).toEqual([{ project_id: project.id, reason: 'preview_taken_down' }]);
    expect((await getSite(ctx.platform, 'feature-new-look-renamed42.previews.localhost')).status).toBe(404);
  });

  it('follows the preview branch policy: none, custom include and exclude (exclude wins); never the production branch', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      preview_branch_mode: 'custom',
      preview_branch_include: ['feature/**', 'release-*'],
      preview_branch_exclude: ['feature/wip-*'],
      auto_deploy_enabled: false,
    });
    const sha = 'a'.repeat(40);
    const reasons = async (branch: string) =>
      (await ctx.push(secret, branch, sha)).body.data.ignored.filter((i: { project_id: string }) => i.project_id === project.id);
    expect(await reasons('feature/wip-thing')).toEqual([{ project_id: project.id, reason: 'preview_branch_policy' }]);
    expect(await reasons('hotfix')).toEqual([{ project_id: project.id, reason: 'preview_branch_policy' }]);
    // The policy never applies to the production branch; auto-deploy off keeps it from building.
    expect(await reasons('main')).toEqual([{ project_id: project.id, reason: 'auto_deploy_disabled' }]);
    await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
      token: ctx.roles.admin.token,
      body: { preview_branch_mode: 'none' },
    });
    expect(await reasons('feature/x')).toEqual([{ project_id: project.id, reason: 'preview_branch_policy' }]);
    expect(await deploymentsOf(project.id)).toEqual([]);
    await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
      token: ctx.roles.admin.token,
      body: { preview_branch_mode: 'custom' },
    });
    const included = await ctx.push(secret, 'release-2', sha, { message: 'Release [skip ci]' });
    expect(included.body.data.builds).toEqual([
      expect.objectContaining({ project_id: project.id, status: 'skipped', skip_reason: 'skip_ci', branch: 'release-2' }),
    ]);
    const listed = await deploymentsOf(project.id);
    expect(listed).toEqual([expect.objectContaining({ status: 'skipped', skip_reason: 'skip_ci', trigger: 'push' })]);
  });

  it('notes a deleted production branch, cleared by the next push to it', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      auto_deploy_enabled: false,
    });
    const deleted = await ctx.push(secret, 'main', null, { deleted: true });
    expect(deleted.body.data.ignored).toEqual([{ project_id: project.id, reason: 'production_branch_deleted' }]);
    const after = (await ctx.platform.api('GET', `/api/v1/projects/${project.id}`, { token: ctx.roles.member.token })).body.data;
    expect(after.production_branch_deleted_at).toBeTruthy();
    await ctx.push(secret, 'main', 'b'.repeat(40));
    const cleared = (await ctx.platform.api('GET', `/api/v1/projects/${project.id}`, { token: ctx.roles.member.token })).body.data;
    expect(cleared.production_branch_deleted_at).toBeNull();
  });

  it('acts once on a delivery id, however many copies race in', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      auto_deploy_enabled: true,
    });
    const delivery = randomUUID();
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => ctx.push(secret, 'main', 'c'.repeat(40), { message: '[ci skip] docs', delivery })),
    );
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    expect(replies.filter((r) => r.body.data.duplicate === false)).toHaveLength(1);
    expect(replies.filter((r) => r.body.data.duplicate === true).every((r) => r.body.data.builds.length === 0)).toBe(true);
    expect(await deploymentsOf(project.id)).toHaveLength(1);
  });
});

describe('merge requests', () => {
  it('builds a preview on open and update, under the request own label, and takes it down on close', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      ...PLAIN_BUILD,
      preview_branch_mode: 'none',
    });
    const sha = ctx.repo.commit('mr-branch', plainStaticSite('mr one'));
    const opened = await sendGithub(ctx.platform, {
      event: 'pull_request',
      secret,
      payload: githubPullRequestPayload({ repoUrl: ctx.repo.url, number: 7, action: 'opened', branch: 'mr-branch', sha }),
    });
    const first = opened.body.data.builds[0];
    expect(first).toMatchObject({ trigger: 'merge_request', target: 'preview' });
    expect(first.preview_url).toMatch(/^http:\/\/mr-7-[a-z0-9]+\.previews\.localhost:\d+$/);
    expect((await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, first.deployment_id)).status).toBe('ready');
    const host = new URL(first.preview_url).hostname;
    expect((await getSite(ctx.platform, host)).text).toBe('<h1>mr one no greeting</h1>');

    const sha2 = ctx.repo.commit('mr-branch', plainStaticSite('mr two'));
    const updated = await sendGithub(ctx.platform, {
      event: 'pull_request',
      secret,
      payload: githubPullRequestPayload({ repoUrl: ctx.repo.url, number: 7, action: 'synchronize', branch: 'mr-branch', sha: sha2 }),
    });
    expect((await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, updated.body.data.builds[0].deployment_id)).status).toBe(
      'ready',
    );
    expect((await getSite(ctx.platform, host)).text).toBe('<h1>mr two no greeting</h1>');

    const closed = await sendGithub(ctx.platform, {
      event: 'pull_request',
      secret,
      payload: githubPullRequestPayload({ repoUrl: ctx.repo.url, number: 7, action: 'closed', branch: 'mr-branch', sha: sha2 }),
    });
    expect(closed.body.data.ignored).toEqual([{ project_id: project.id, reason: 'preview_taken_down' }]);
    expect((await getSite(ctx.platform, host)).status).toBe(404);
  });

  it('ignores merge requests when mr_previews_enabled is false, and a GitLab merge request skips with [skip ci]', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      mr_previews_enabled: false,
    });
    const ignored = await sendGitlab(ctx.platform, {
      event: 'Merge Request Hook',
      token: secret,
      payload: gitlabMergeRequestPayload({ repoUrl: ctx.repo.url, iid: 3, action: 'open', branch: 'x', sha: 'd'.repeat(40) }),
    });
    expect(ignored.body.data.ignored).toEqual([{ project_id: project.id, reason: 'mr_previews_disabled' }]);
    await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
      token: ctx.roles.admin.token,
      body: { mr_previews_enabled: true },
    });
    const skipped = await sendGitlab(ctx.platform, {
      event: 'Merge Request Hook',
      token: secret,
      payload: gitlabMergeRequestPayload({
        repoUrl: ctx.repo.url,
        iid: 3,
        action: 'update',
        branch: 'x',
        sha: 'd'.repeat(40),
        message: 'wip [skip ci]',
      }),
    });
    expect(skipped.body.data.builds).toEqual([
      expect.objectContaining({ status: 'skipped', skip_reason: 'skip_ci', trigger: 'merge_request' }),
    ]);
  });
});

describe('rolling back past previews', () => {
  it('slipway rollback makes the production deployment before the live one live, never a preview built in between', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      ...PLAIN_BUILD,
    });
    const built = async (branch: string, text: string) => {
      const sha = ctx.repo.commit(branch, plainStaticSite(text));
      const queued = (await ctx.push(secret, branch, sha)).body.data.builds[0];
      const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
      expect(build.status, build.build_log.join('\n')).toBe('ready');
      return build;
    };
    const first = await built('main', 'one');
    const preview = await built('rollback-preview', 'preview');
    expect(preview.target).toBe('preview');
    await built('main', 'two');
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('<h1>two no greeting</h1>');

    const env = { SLIPWAY_API_URL: ctx.platform.baseUrl, SLIPWAY_TOKEN: ctx.roles.admin.token, XDG_CONFIG_HOME: freshConfigHome() };
    const run = await runCli(['rollback', '--project', project.id, '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).live_deployment_id).toBe(first.id);
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('<h1>one no greeting</h1>');
  });
});
