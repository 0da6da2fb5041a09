import { describe, expect, it, vi } from 'vitest';
import { config } from '../../lib/config.ts';
import { createGitProject, staticSite, useBuildsSuite, waitForBuild } from '../support/builds.ts';
import { type Jwks, verifyForgeToken } from '../support/forge-tokens.ts';
import { startGitServer } from '../support/git-server.ts';
import { githubPushPayload, sendGithub } from '../support/webhooks.ts';

/**
 * Forge tokens as workload identity (issue 39, item 1): ES256 tokens whose keys are published at
 * /.well-known/jwks.json, `sub` naming the team and the project, and audiences a team registers
 * platform-wide before its projects may aim tokens at them.
 */
vi.setConfig({ testTimeout: 180_000 });
const ctx = useBuildsSuite();
const unique = () => Math.random().toString(36).slice(2, 10);

describe('GET /.well-known/jwks.json', () => {
  it('answers the public keys as a JWKS document (no envelope, no private part), on the API and on the console origin', async () => {
    const reply = await ctx.platform.api('GET', '/.well-known/jwks.json');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/jwk-set+json');
    expect(reply.headers.get('cache-control')).toBe('public, max-age=300');
    const jwks = reply.body as Jwks;
    expect(jwks.keys.length).toBeGreaterThan(0);
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    }
    // The tokens' iss is the console's origin: the JWKS answers there too.
    const onConsole = await fetch(`http://127.0.0.1:${ctx.platform.port}/.well-known/jwks.json`, {
      headers: { host: new URL(config.consoleUrl()).host },
    });
    expect(onConsole.status).toBe(200);
    expect(await onConsole.json()).toEqual(jwks);
  });
});

describe('forge audiences', () => {
  const register = (token: string, audience: string) =>
    ctx.platform.api('POST', '/api/v1/team/forge-audiences', { token, body: { audience } });

  it('a team admin registers an audience (201, again 200), members list it but may not register or release one (403)', async () => {
    const audience = `https://forge.example.test/${unique()}`;
    const member = await register(ctx.roles.member.token, audience);
    expect(member.status).toBe(403);
    const created = await register(ctx.roles.admin.token, audience);
    expect(created.status, created.text).toBe(201);
    expect(created.body.data).toMatchObject({
      audience,
      id: expect.stringMatching(/^[0-9a-f]{64}$/),
      created_by: ctx.roles.admin.user.user_id,
    });
    const again = await register(ctx.roles.owner.token, audience);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(created.body.data);
    const listed = await ctx.platform.api('GET', '/api/v1/team/forge-audiences', { token: ctx.roles.member.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.audiences).toContainEqual(created.body.data);
    const memberRelease = await ctx.platform.api('DELETE', '/api/v1/team/forge-audiences', {
      token: ctx.roles.member.token,
      body: { audience },
    });
    expect(memberRelease.status).toBe(403);
    for (const bad of ['', ' padded ', 'line\nbreak', 'x'.repeat(1025)]) {
      const refused = await register(ctx.roles.admin.token, bad);
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect(refused.body.code).toBe('VALIDATION_FAILED');
    }
  });

  it("another team's audience answers 409 FORGE_AUDIENCE_TAKEN until that team releases it", async () => {
    const audience = `https://forge.example.test/${unique()}`;
    expect((await register(ctx.roles.admin.token, audience)).status).toBe(201);
    const taken = await register(ctx.roles.outsider.token, audience);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('FORGE_AUDIENCE_TAKEN');
    // Releasing is the holder's: the other team's DELETE finds nothing of its own.
    const notTheirs = await ctx.platform.api('DELETE', '/api/v1/team/forge-audiences', {
      token: ctx.roles.outsider.token,
      body: { audience },
    });
    expect(notTheirs.status).toBe(404);
    expect(notTheirs.body.code).toBe('FORGE_AUDIENCE_NOT_FOUND');
    const released = await ctx.platform.api('DELETE', '/api/v1/team/forge-audiences', { token: ctx.roles.admin.token, body: { audience } });
    expect(released.status, released.text).toBe(200);
    const listed = await ctx.platform.api('GET', '/api/v1/team/forge-audiences', { token: ctx.roles.admin.token });
    expect(listed.body.data.audiences.map((a: { audience: string }) => a.audience)).not.toContain(audience);
    expect((await register(ctx.roles.outsider.token, audience)).status).toBe(201);
  });

  it('of two teams claiming one audience at once, exactly one gets it (a conditional write)', async () => {
    for (let round = 0; round < 3; round++) {
      const audience = `https://forge.example.test/race-${unique()}`;
      const tokens = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? ctx.roles.admin.token : ctx.roles.outsider.token));
      const replies = await Promise.all(tokens.map((token) => register(token, audience)));
      const statuses = replies.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 201),
        statuses.join(),
      ).toHaveLength(1);
      const winner = tokens[statuses.indexOf(201)];
      replies.forEach((reply, i) => {
        if (reply.status === 201) return;
        if (tokens[i] === winner) expect(reply.status).toBe(200);
        else expect(reply.body.code, reply.text).toBe('FORGE_AUDIENCE_TAKEN');
      });
      const holders = await Promise.all(
        [ctx.roles.admin.token, ctx.roles.outsider.token].map(async (token) =>
          (await ctx.platform.api('GET', '/api/v1/team/forge-audiences', { token })).body.data.audiences.some(
            (a: { audience: string }) => a.audience === audience,
          ),
        ),
      );
      expect(holders.filter(Boolean)).toHaveLength(1);
    }
  });

  it('a project naming an audience its team has not registered answers 400 FORGE_AUDIENCE_NOT_REGISTERED, on create and on PATCH', async () => {
    const mine = `https://forge.example.test/${unique()}`;
    const theirs = `https://forge.example.test/${unique()}`;
    expect((await register(ctx.roles.admin.token, mine)).status).toBe(201);
    expect((await register(ctx.roles.outsider.token, theirs)).status).toBe(201);
    for (const audience of [theirs, `https://forge.example.test/${unique()}`]) {
      const created = await ctx.platform.api('POST', '/api/v1/projects', {
        token: ctx.roles.admin.token,
        body: { name: `Forge ${unique()}`, git_auth_mode: 'forge_jwt', forge_audience: audience },
      });
      expect(created.status, created.text).toBe(400);
      expect(created.body.code).toBe('FORGE_AUDIENCE_NOT_REGISTERED');
    }
    const created = await ctx.platform.api('POST', '/api/v1/projects', {
      token: ctx.roles.admin.token,
      body: { name: `Forge ${unique()}`, git_auth_mode: 'forge_jwt', forge_audience: mine },
    });
    expect(created.status, created.text).toBe(201);
    const patched = await ctx.platform.api('PATCH', `/api/v1/projects/${created.body.data.id}`, {
      token: ctx.roles.admin.token,
      body: { forge_audience: theirs },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.code).toBe('FORGE_AUDIENCE_NOT_REGISTERED');
    const unchanged = await ctx.platform.api('GET', `/api/v1/projects/${created.body.data.id}`, { token: ctx.roles.member.token });
    expect(unchanged.body.data.forge_audience).toBe(mine);
    // Clearing it needs no registration.
    const cleared = await ctx.platform.api('PATCH', `/api/v1/projects/${created.body.data.id}`, {
      token: ctx.roles.admin.token,
      body: { forge_audience: null, git_auth_mode: 'pat' },
    });
    expect(cleared.status, cleared.text).toBe(200);
  });
});

describe('forge tokens at the fetch', () => {
  it('sub names the team and the project, so a forge pinning it lets one project in and not another of the same audience', async () => {
    const audience = `https://forge.example.test/${unique()}`;
    expect((await register(audience)).status).toBe(201);
    const jwks = (await ctx.platform.api('GET', '/.well-known/jwks.json')).body as Jwks;
    const pinned = { subject: 'unset' };
    const seen: string[] = [];
    const forge = await startGitServer({
      name: 'pinned',
      authorize: (header) => {
        const jwt = /^Bearer (.+)$/.exec(header ?? '');
        if (!jwt) return false;
        const check = verifyForgeToken(jwt[1]!, { jwks, issuer: config.consoleUrl(), audience, subject: pinned.subject });
        seen.push(check.ok ? 'ok' : check.why);
        return check.ok;
      },
    });
    try {
      const settings = {
        git_repo_url: forge.url,
        git_auth_mode: 'forge_jwt',
        forge_audience: audience,
        build_command: 'npm run build',
        output_dir: 'dist',
      };
      const owner = await createGitProject(ctx.platform, ctx.roles.admin.token, settings);
      const sibling = await createGitProject(ctx.platform, ctx.roles.admin.token, settings);
      pinned.subject = `team:${ctx.roles.team.id}:project:${owner.project.id}`;
      const sha = forge.commit('main', staticSite('pinned'));
      const payload = githubPushPayload({ repoUrl: forge.url, branch: 'main', sha });
      const results: Record<string, any> = {};
      for (const { project, secret } of [owner, sibling]) {
        const reply = await sendGithub(ctx.platform, { event: 'push', secret, payload });
        const queued = reply.body.data.builds.find((b: { project_id: string }) => b.project_id === project.id);
        results[project.id] = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
      }
      expect(results[owner.project.id].status, results[owner.project.id].build_log.join('\n')).toBe('ready');
      expect(results[sibling.project.id].status).toBe('failed');
      expect(results[sibling.project.id].failure_message).toMatch(/^Fetch failed: /);
      expect(seen).toContain('ok');
      expect(seen).toContain(`sub team:${ctx.roles.team.id}:project:${sibling.project.id}`);
    } finally {
      await forge.close();
    }
  });

  it('mints no token for an audience the team released (and another team claimed): the build fails before the fetch', async () => {
    const audience = `https://forge.example.test/${unique()}`;
    expect((await register(audience)).status).toBe(201);
    const { project, secret } = await createGitProject(ctx.platform, ctx.roles.admin.token, {
      git_repo_url: ctx.repo.url,
      git_auth_mode: 'forge_jwt',
      forge_audience: audience,
      build_command: 'npm run build',
      output_dir: 'dist',
    });
    const released = await ctx.platform.api('DELETE', '/api/v1/team/forge-audiences', { token: ctx.roles.admin.token, body: { audience } });
    expect(released.status).toBe(200);
    const claimed = await ctx.platform.api('POST', '/api/v1/team/forge-audiences', { token: ctx.roles.outsider.token, body: { audience } });
    expect(claimed.status).toBe(201);
    const before = ctx.repo.commit('main', staticSite('released'));
    const reply = await ctx.push(secret, 'main', before);
    const queued = reply.body.data.builds.find((b: { project_id: string }) => b.project_id === project.id);
    const build = await waitForBuild(ctx.platform, ctx.roles.member.token, project.id, queued.deployment_id);
    expect(build.status).toBe('failed');
    expect(build.failure_message).toBe(
      `The forge audience ${audience} is not registered to this team, so no forge token is minted for it: a team admin registers it (POST /api/v1/team/forge-audiences).`,
    );
  });

  function register(audience: string) {
    return ctx.platform.api('POST', '/api/v1/team/forge-audiences', { token: ctx.roles.admin.token, body: { audience } });
  }
});
