import { describe, expect, it, vi } from 'vitest';
import { createGitProject, getSite, PLAIN_BUILD, plainStaticSite, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { startGitServer } from '../support/git-server.ts';
import { githubPushPayload, gitlabPushPayload, sendGithub, sendGitlab } from '../support/webhooks.ts';
import { type Jwks, verifyForgeToken } from '../support/forge-tokens.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { runCli } from '../support/cli.ts';

/**
 * A Git push becomes a live deployment (docs/builds.md): a real repository
 * served by `git http-backend` on loopback, webhooks shaped like GitHub's and
 * GitLab's, the builds queue, the build in the local sandbox, the publish
 * through the upload steps, and the site served.
 */
// Each test runs one or more real builds: seconds each, more on a loaded machine.
vi.setConfig({ testTimeout: 120_000 });
const ctx = useBuildsSuite();

describe('fetch credentials', () => {
  it('fetches with the project access token (pat) and a minted forge JWT (forge_jwt); a refused fetch is a platform failure that does not count', async () => {
    const token = 'pat-abc-123';
    const audience = 'https://forge.example.test/slipway';
    // The forge verifies as docs/builds.md says: the JWKS, iss, aud, exp, and sub pinned to the one project it serves.
    const jwks = (await ctx.platform.api('GET', '/.well-known/jwks.json')).body as Jwks;
    const pinned = { subject: '' };
    const guarded = await startGitServer({
      name: 'private',
      authorize: (header) => {
        if (header === `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`) return true;
        const jwt = /^Bearer (.+)$/.exec(header ?? '');
        if (!jwt) return false;
        return verifyForgeToken(jwt[1]!, { jwks, issuer: config.consoleUrl(), audience, subject: pinned.subject }).ok;
      },
    });
    try {
      const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
        git_repo_url: guarded.url,
        // No install (plainStaticSite): the subject is the fetch's credential.
        ...PLAIN_BUILD,
      });
      pinned.subject = `team:${ctx.roles.team.id}:project:${project.id}`;
      // A new commit each time: a delivery of a commit already built for the branch builds nothing (replays).
      const pushed = async (label: string) => {
        const sha = guarded.commit('main', plainStaticSite(label));
        const reply = await sendGithub(ctx.platform, {
          event: 'push',
          secret,
          payload: githubPushPayload({ repoUrl: guarded.url, branch: 'main', sha }),
        });
        return reply.body.data.builds[0].deployment_id;
      };
      const refused = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, await pushed('refused'));
      expect(refused.status).toBe('failed');
      expect(refused.failure_message).toMatch(/^Fetch failed: /);
      expect(
        (await ctx.platform.api('GET', `/api/v1/projects/${project.id}`, { token: ctx.roles.member.token })).body.data
          .consecutive_build_failures,
      ).toBe(0);

      const withToken = await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
        token: ctx.roles.admin.token,
        body: { git_access_token: token },
      });
      expect(withToken.status).toBe(200);
      expect(JSON.stringify(withToken.body.data)).not.toContain(token);
      expect((await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, await pushed('pat'))).status).toBe('ready');

      // forge_jwt for an audience the team has not registered: refused; registered: the build fetches with a token.
      const forgeJwt = { git_access_token: null, git_auth_mode: 'forge_jwt', forge_audience: audience };
      const unregistered = await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, {
        token: ctx.roles.admin.token,
        body: forgeJwt,
      });
      expect(unregistered.status, unregistered.text).toBe(400);
      expect(unregistered.body.code).toBe('FORGE_AUDIENCE_NOT_REGISTERED');
      const registered = await ctx.platform.api('POST', '/api/v1/team/forge-audiences', {
        token: ctx.roles.admin.token,
        body: { audience },
      });
      expect(registered.status, registered.text).toBe(201);
      const saved = await ctx.platform.api('PATCH', `/api/v1/projects/${project.id}`, { token: ctx.roles.admin.token, body: forgeJwt });
      expect(saved.status, saved.text).toBe(200);
      const viaJwt = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, await pushed('jwt'));
      expect(viaJwt.status, viaJwt.build_log.join('\n')).toBe('ready');
      const bearer = guarded.authorizations.filter((h) => h.startsWith('Bearer ')).at(-1)!;
      const [header, claims] = bearer
        .slice('Bearer '.length)
        .split('.')
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
      expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: jwks.keys[0]!.kid });
      expect(claims).toMatchObject({
        iss: config.consoleUrl(),
        aud: audience,
        sub: pinned.subject,
        team_id: ctx.roles.team.id,
        project_id: project.id,
      });
      expect(claims.exp - claims.iat).toBe(300);
    } finally {
      await guarded.close();
    }
  });
});

describe('a push to the production branch', () => {
  it('builds with the production variables (masked in the log, absent from functions) and publishes live', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      build_command: 'npm run build',
      output_dir: 'dist',
    });
    const env = await ctx.platform.api('PUT', `/api/v1/projects/${project.id}/env/API_TOKEN`, {
      token: ctx.roles.admin.token,
      body: { value: 'tok-secret-1234', environment: 'production' },
    });
    expect(env.status, env.text).toBeLessThan(300);
    await ctx.platform.api('PUT', `/api/v1/projects/${project.id}/env/GREETING`, {
      token: ctx.roles.admin.token,
      body: { value: 'hello-prod', environment: 'production' },
    });
    await ctx.platform.api('PUT', `/api/v1/projects/${project.id}/env/GREETING`, {
      token: ctx.roles.admin.token,
      body: { value: 'hello-preview', environment: 'preview' },
    });
    const sha = ctx.repo.commit('main', staticSite('v1'), 'First version');

    const reply = await sendGithub(ctx.platform, {
      event: 'push',
      secret,
      payload: githubPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha, message: 'First version' }),
    });
    expect(reply.status, reply.text).toBe(202);
    expect(reply.body.data.builds).toHaveLength(1);
    const queued = reply.body.data.builds[0];
    expect(queued).toMatchObject({
      project_id: project.id,
      status: 'queued',
      trigger: 'push',
      target: 'production',
      branch: 'main',
      commit_sha: sha,
    });

    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    expect(build.status, build.build_log.join('\n')).toBe('ready');
    expect(build).toMatchObject({
      trigger: 'push',
      branch: 'main',
      commit_sha: sha,
      commit_message: 'First version',
      is_live: true,
      preview_url: null,
    });
    expect(build.started_at).toBeTruthy();
    expect(build.finished_at).toBeTruthy();
    const log = build.build_log.join('\n');
    expect(log).toContain('building with API_TOKEN=***');
    expect(log).not.toContain('tok-secret-1234');

    const site = await getSite(ctx.platform, `${project.subdomain}.localhost`);
    expect(site).toEqual({ status: 200, text: '<h1>v1 hello-prod</h1>' });
    const after = await ctx.platform.api('GET', `/api/v1/projects/${project.id}`, { token: ctx.roles.member.token });
    expect(after.body.data.live_deployment_id).toBe(queued.deployment_id);
    expect(after.body.data.repo_default_branch).toBe('main');
  });

  it('accepts a GitLab push hook with its token, and refuses a wrong token with 401 and no build', async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: `${ctx.repo.url.replace('http://127.0.0.1', 'HTTP://127.0.0.1')}`,
      // No install (plainStaticSite): the subject is the hook's token; the push above builds with npm.
      ...PLAIN_BUILD,
    });
    const sha = ctx.repo.commit('main', plainStaticSite('gitlab'), 'From GitLab');
    const wrong = await sendGitlab(ctx.platform, {
      event: 'Push Hook',
      token: 'not-the-secret',
      payload: gitlabPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('GIT_WEBHOOK_SIGNATURE_INVALID');
    const none = await ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments`, { token: ctx.roles.member.token });
    expect(none.body.data.deployments).toEqual([]);

    const reply = await sendGitlab(ctx.platform, {
      event: 'Push Hook',
      token: secret,
      payload: gitlabPushPayload({ repoUrl: ctx.repo.url, branch: 'main', sha }),
    });
    expect(reply.status, reply.text).toBe(202);
    const mine = reply.body.data.builds.find((b: { project_id: string }) => b.project_id === project.id);
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, mine.deployment_id);
    expect(build.status, build.build_log.join('\n')).toBe('ready');
    expect((await getSite(ctx.platform, `${project.subdomain}.localhost`)).text).toBe('<h1>gitlab no greeting</h1>');
  });
});

describe('the deployments listing', () => {
  it("pages a project's deployments newest first with page and page_size, and refuses bad paging with 400", async () => {
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, { git_repo_url: ctx.repo.url });
    // Skipped builds are deployments recorded at once: five of them, oldest first.
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const reply = await ctx.push(secret, 'main', String(i + 1).repeat(40), { message: `docs ${i} [skip ci]` });
      made.push(reply.body.data.builds.find((b: { project_id: string }) => b.project_id === project.id).deployment_id);
    }
    const list = (query: string) =>
      ctx.platform.api('GET', `/api/v1/projects/${project.id}/deployments${query}`, { token: ctx.roles.member.token });
    const newest = [...made].reverse();
    const all = await list('');
    expect(all.status, all.text).toBe(200);
    expect(all.body.data).toMatchObject({ page: 1, page_size: 20, total: 5 });
    expect(all.body.data.deployments.map((d: { id: string }) => d.id)).toEqual(newest);
    for (const [page, ids] of [
      [1, newest.slice(0, 2)],
      [2, newest.slice(2, 4)],
      [3, newest.slice(4)],
      [4, []],
    ] as const) {
      const reply = await list(`?page=${page}&page_size=2`);
      expect(reply.body.data).toMatchObject({ page, page_size: 2, total: 5 });
      expect(reply.body.data.deployments.map((d: { id: string }) => d.id)).toEqual(ids);
    }
    expect((await list('?page_size=5')).body.data.deployments).toHaveLength(5);

    // A deployment from before the index: not listed until the operator's backfill gives it its keys.
    const key = { pk: `PROJECT#${project.id}`, sk: `DEPLOYMENT#${made[2]}` };
    await dynamo().send(new UpdateCommand({ TableName: config.tableName(), Key: key, UpdateExpression: 'REMOVE gsi1pk, gsi1sk' }));
    expect((await list('')).body.data).toMatchObject({ total: 4 });
    const operator = { ...ctx.platform.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };
    const backfill = await runCli(['admin', 'backfill-deployments-index'], operator);
    expect(backfill.code, backfill.stderr).toBe(0);
    expect(JSON.parse(backfill.stdout)).toEqual({ indexed: 1 });
    expect((await list('')).body.data.deployments.map((d: { id: string }) => d.id)).toEqual(newest);
    expect(JSON.parse((await runCli(['admin', 'backfill-deployments-index'], operator)).stdout)).toEqual({ indexed: 0 });
    for (const bad of ['?page=0', '?page=x', '?page_size=0', '?page_size=101', '?page_size=2.5']) {
      const reply = await list(bad);
      expect(reply.status, bad).toBe(400);
      expect(reply.body.code).toBe('VALIDATION_FAILED');
    }
  });
});
