import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTeamPlan } from '../../lib/teams/standing.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, putMissing, uniqueName, uniqueSite } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let s3: S3Client;
/** A published project with two ready deployments (v2 live) and one still uploading. */
let p: { id: string; slug: string; subdomain: string; name: string; v1: string; v2: string; uploading: string };

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  await setTeamPlan(m.team.id, 'team');
  s3 = new S3Client({ endpoint: platform.awsEndpoint, region: 'us-east-1', forcePathStyle: true });
  const name = uniqueName('Promoted');
  const first = await deploy(platform, m.member.token, uniqueSite(), { name });
  const id = first.begin.project_id;
  const s2 = uniqueSite();
  const second = await platform.api('POST', `/api/v1/projects/${id}/uploads`, { token: m.member.token, body: { files: s2.files } });
  await putMissing(platform, m.member.token, second.body.data.upload_id, second.body.data.missing, s2);
  await platform.api('POST', `/api/v1/uploads/${second.body.data.upload_id}/finalize`, { token: m.member.token });
  const third = await platform.api('POST', `/api/v1/projects/${id}/uploads`, {
    token: m.member.token,
    body: { files: uniqueSite().files },
  });
  p = {
    id,
    name,
    slug: first.begin.project.slug,
    subdomain: first.begin.project.subdomain,
    v1: first.begin.deployment_id,
    v2: second.body.data.deployment_id,
    uploading: third.body.data.deployment_id,
  };
}, 120_000);
afterAll(async () => {
  s3?.destroy();
  await platform?.stop();
});

const PROMOTE_FIELDS = [
  'auto_deploy_enabled',
  'build_command',
  'cdn_edge_rule_guid',
  'cdn_not_found_edge_rule_guid',
  'cdn_pull_zone_id',
  'created_at',
  'default_branch',
  'framework',
  'git_connection_id',
  'git_provider',
  'git_repo_url',
  'id',
  'live_deployment_id',
  'mr_previews_enabled',
  'name',
  'output_dir',
  'package_manager',
  'preview_branch_exclude',
  'preview_branch_include',
  'preview_branch_mode',
  'production_url',
  'root_directory',
  'slug',
  'status',
  'subdomain',
  'team_id',
  'updated_at',
];

async function objectCount(): Promise<number> {
  let count = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: platform.env.SITES_BUCKET, Prefix: `${m.team.id}/${p.slug}/`, ContinuationToken: token }),
    );
    count += page.KeyCount ?? 0;
    token = page.NextContinuationToken;
  } while (token);
  return count;
}

const promote = (token: string | undefined, deploymentId: unknown, projectId = p.id) =>
  platform.api('POST', `/api/v1/projects/${projectId}/promote`, { token, body: { deployment_id: deploymentId } });

describe('POST /api/v1/projects/{id}/promote', { timeout: 120_000 }, () => {
  it('points production at an earlier deployment instantly, copying nothing, and answers exactly the promote fields', async () => {
    const before = await objectCount();
    const reply = await promote(m.member.token, p.v1);
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body.data).sort()).toEqual([...PROMOTE_FIELDS].sort());
    expect(reply.body.data).toMatchObject({
      id: p.id,
      live_deployment_id: p.v1,
      slug: p.slug,
      subdomain: p.subdomain,
      team_id: m.team.id,
      status: 'active',
    });
    expect(await objectCount()).toBe(before);
    const project = await platform.api('GET', `/api/v1/projects/${p.id}`, { token: m.member.token });
    expect(project.body.data.live_deployment_id).toBe(p.v1);
    expect((await promote(m.member.token, p.v2)).body.data.live_deployment_id).toBe(p.v2);
  });

  it('404 for a deployment of another project, or an unknown one; 400 for one not ready', async () => {
    const other = await deploy(platform, m.member.token, uniqueSite(), { name: uniqueName() });
    expectError(await promote(m.member.token, other.begin.deployment_id), 404, 'DEPLOYMENT_NOT_FOUND');
    expectError(await promote(m.member.token, '00000000-0000-4000-8000-000000000000'), 404, 'DEPLOYMENT_NOT_FOUND');
    expectError(await promote(m.member.token, 'nope'), 404, 'DEPLOYMENT_NOT_FOUND');
    expectError(await promote(m.member.token, p.uploading), 400, 'DEPLOYMENT_NOT_READY');
    expectError(await promote(m.member.token, undefined), 400, 'VALIDATION_FAILED');
    const project = await platform.api('GET', `/api/v1/projects/${p.id}`, { token: m.member.token });
    expect(project.body.data.live_deployment_id).toBe(p.v2);
  });

  it('authorization: 401, 404 outside the team (and for a platform admin), 200 for every role and an API key', async () => {
    expectError(await promote(undefined, p.v2), 401, 'UNAUTHENTICATED');
    expectError(await promote(m.outsider.token, p.v2), 404, 'PROJECT_NOT_FOUND');
    expectError(await promote(m.platformAdmin.token, p.v2), 404, 'PROJECT_NOT_FOUND');
    expectError(await promote(m.member.token, p.v2, '00000000-0000-4000-8000-000000000000'), 404, 'PROJECT_NOT_FOUND');
    // The spec's path id is a project UUID: anything else is a bad request (promote's errors are 400 and 404).
    for (const id of ['not-a-project', p.slug, `${p.id}0`]) expectError(await promote(m.member.token, p.v2, id), 400, 'PROJECT_ID_INVALID');
    expectError(await promote(undefined, p.v2, 'not-a-project'), 401, 'UNAUTHENTICATED');
    for (const who of ['owner', 'admin', 'member', 'apiKey'] as const) expect((await promote(m[who].token, p.v2)).status).toBe(200);
  });

  it('racing promotes leave production on one of them', async () => {
    const replies = await Promise.all([promote(m.member.token, p.v1), promote(m.admin.token, p.v2), promote(m.owner.token, p.v1)]);
    for (const r of replies) expect(r.status).toBe(200);
    const live = (await platform.api('GET', `/api/v1/projects/${p.id}`, { token: m.member.token })).body.data.live_deployment_id;
    expect([p.v1, p.v2]).toContain(live);
    await promote(m.member.token, p.v2);
  });
});

describe('GET /api/v1/projects/{id}/deployments', { timeout: 120_000 }, () => {
  it('lists the deployments newest first, marking the live one', async () => {
    const reply = await platform.api('GET', `/api/v1/projects/${p.id}/deployments`, { token: m.member.token });
    expect(reply.status).toBe(200);
    const list = reply.body.data.deployments;
    expect(list.map((d: any) => d.id)).toEqual([p.uploading, p.v2, p.v1]);
    expect(list.map((d: any) => d.status)).toEqual(['uploading', 'ready', 'ready']);
    expect(list.map((d: any) => d.is_live)).toEqual([false, true, false]);
    expect(Object.keys(list[0]).sort()).toEqual(
      [
        'id',
        'project_id',
        'team_id',
        'status',
        'label',
        'created_at',
        'ready_at',
        'file_count',
        'total_bytes',
        'is_live',
        // the build fields every deployment carries; a direct upload's are null
        'trigger',
        'target',
        'branch',
        'commit_sha',
        'commit_message',
        'merge_request',
        'preview_url',
        'queued_at',
        'started_at',
        'finished_at',
        'failure_message',
        'skip_reason',
        'log_lines',
      ].sort(),
    );
    expect(list[0]).toMatchObject({ trigger: null, branch: null, commit_sha: null, preview_url: null });
  });

  it('authorization: 401, 404 outside the team', async () => {
    expectError(await platform.api('GET', `/api/v1/projects/${p.id}/deployments`), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('GET', `/api/v1/projects/${p.id}/deployments`, { token: m.outsider.token }), 404, 'PROJECT_NOT_FOUND');
    expectError(
      await platform.api('GET', `/api/v1/projects/${p.id}/deployments`, { token: m.platformAdmin.token }),
      404,
      'PROJECT_NOT_FOUND',
    );
    for (const who of ['owner', 'admin', 'apiKey'] as const) {
      expect((await platform.api('GET', `/api/v1/projects/${p.id}/deployments`, { token: m[who].token })).status).toBe(200);
    }
  });
});

describe('GET /api/v1/projects and GET /api/v1/projects/{id}', { timeout: 120_000 }, () => {
  it("lists the current team's projects, newest first, in pages", async () => {
    const all = await platform.api('GET', '/api/v1/projects?limit=100', { token: m.member.token });
    expect(all.status).toBe(200);
    const ids = all.body.data.projects.map((x: any) => x.id);
    expect(ids).toContain(p.id);
    const created = all.body.data.projects.map((x: any) => x.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const page1 = await platform.api('GET', '/api/v1/projects?limit=1', { token: m.member.token });
    expect(page1.body.data.projects.map((x: any) => x.id)).toEqual([ids[0]]);
    const page2 = await platform.api('GET', `/api/v1/projects?limit=1&cursor=${page1.body.data.next_cursor}`, { token: m.member.token });
    expect(page2.body.data.projects.map((x: any) => x.id)).toEqual([ids[1]]);
    expectError(await platform.api('GET', '/api/v1/projects?cursor=garbage', { token: m.member.token }), 400, 'VALIDATION_FAILED');
    // This team's index partition but a key DynamoDB would refuse (a number, an extra attribute): refused as a cursor.
    const own = JSON.parse(Buffer.from(page1.body.data.next_cursor, 'base64url').toString('utf8'));
    for (const forged of [
      { ...own, pk: 5 },
      { ...own, status: 'active' },
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString('base64url');
      expectError(await platform.api('GET', `/api/v1/projects?cursor=${cursor}`, { token: m.member.token }), 400, 'VALIDATION_FAILED');
    }
    expectError(await platform.api('GET', '/api/v1/projects?limit=0', { token: m.member.token }), 400, 'VALIDATION_FAILED');
    // Another team's cursor is refused, and another team sees none of these projects.
    const other = await platform.api('GET', '/api/v1/projects', { token: m.outsider.token });
    expect(other.body.data.projects.map((x: any) => x.id)).not.toContain(p.id);
    expectError(
      await platform.api('GET', `/api/v1/projects?cursor=${page1.body.data.next_cursor}`, { token: m.outsider.token }),
      400,
      'VALIDATION_FAILED',
    );
  });

  it('list authorization: 401; 400 for a platform admin without a team; 403 naming a team one is not in', async () => {
    expectError(await platform.api('GET', '/api/v1/projects'), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('GET', '/api/v1/projects', { token: m.platformAdmin.token }), 400, 'NO_CURRENT_TEAM');
    expectError(
      await platform.api('GET', '/api/v1/projects', { token: m.outsider.token, headers: { 'x-team-id': m.team.id } }),
      403,
      'FORBIDDEN',
    );
    for (const who of ['owner', 'admin', 'member', 'apiKey'] as const) {
      expect((await platform.api('GET', '/api/v1/projects', { token: m[who].token })).status).toBe(200);
    }
  });

  it('GET one: every role and an API key; 404 outside the team and for unknown ids', async () => {
    for (const who of ['owner', 'admin', 'member', 'apiKey'] as const) {
      const reply = await platform.api('GET', `/api/v1/projects/${p.id}`, { token: m[who].token });
      expect(reply.status).toBe(200);
      expect(reply.body.data).toMatchObject({ id: p.id, name: p.name, live_deployment_id: p.v2, provisional_until: null });
    }
    expectError(await platform.api('GET', `/api/v1/projects/${p.id}`), 401, 'UNAUTHENTICATED');
    expectError(await platform.api('GET', `/api/v1/projects/${p.id}`, { token: m.outsider.token }), 404, 'PROJECT_NOT_FOUND');
    expectError(await platform.api('GET', `/api/v1/projects/${p.id}`, { token: m.platformAdmin.token }), 404, 'PROJECT_NOT_FOUND');
    expectError(await platform.api('GET', '/api/v1/projects/not-a-uuid', { token: m.member.token }), 404, 'PROJECT_NOT_FOUND');
  });
});

describe('PATCH /api/v1/projects/{id}', { timeout: 120_000 }, () => {
  const patch = (token: string | undefined, body: unknown, id = p.id) => platform.api('PATCH', `/api/v1/projects/${id}`, { token, body });

  it('writes settings; enums are validated', async () => {
    const reply = await patch(m.admin.token, {
      framework: 'astro',
      build_command: 'npm run build',
      output_dir: 'dist',
      package_manager: 'pnpm',
      preview_branch_mode: 'custom',
      preview_branch_include: ['feature/*'],
      analytics_enabled: false,
      platform_url_mode: 'redirect',
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({
      framework: 'astro',
      build_command: 'npm run build',
      output_dir: 'dist',
      package_manager: 'pnpm',
      preview_branch_mode: 'custom',
      preview_branch_include: ['feature/*'],
      analytics_enabled: false,
      platform_url_mode: 'redirect',
      slug: p.slug,
      live_deployment_id: p.v2,
    });
    for (const bad of [
      { framework: 'rails' },
      { preview_branch_mode: 'some' },
      { package_manager: 'pip' },
      { platform_url_mode: 'proxy' },
      { analytics_enabled: 'yes' },
      { unknown_field: 1 },
    ]) {
      expectError(await patch(m.admin.token, bad), 400, 'VALIDATION_FAILED');
    }
  });

  it('the slug is immutable: a different slug is refused, the same slug passes', async () => {
    const reply = await patch(m.admin.token, { slug: 'something-else' });
    expectError(reply, 400, 'PROJECT_SLUG_IMMUTABLE');
    expect((await patch(m.admin.token, { slug: p.slug, name: p.name })).status).toBe(200);
  });

  it('never writes the auto-deploy breaker fields or other system state', async () => {
    const reply = await patch(m.admin.token, {
      auto_deploy_enabled: true,
      auto_deploy_paused_at: '2026-01-01T00:00:00.000Z',
      auto_deploy_pause_reason: 'stale',
      consecutive_build_failures: 9,
      last_build_failure_message: 'stale',
      live_deployment_id: p.v1,
      provisional_until: '2030-01-01T00:00:00.000Z',
    });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toMatchObject({
      auto_deploy_enabled: true,
      auto_deploy_paused_at: null,
      auto_deploy_pause_reason: null,
      consecutive_build_failures: 0,
      last_build_failure_message: null,
      live_deployment_id: p.v2,
      provisional_until: null,
    });
  });

  it('keeps names unique in the team, also when two renames race', async () => {
    const a = await deploy(platform, m.member.token, uniqueSite(), { name: uniqueName('A') });
    const b = await deploy(platform, m.member.token, uniqueSite(), { name: uniqueName('B') });
    expectError(await patch(m.admin.token, { name: a.begin.project.name }, b.begin.project_id), 409, 'PROJECT_NAME_TAKEN');
    const target = uniqueName('Renamed');
    const replies = await Promise.all([
      patch(m.admin.token, { name: target }, a.begin.project_id),
      patch(m.owner.token, { name: target }, b.begin.project_id),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
    expectError(replies.find((r) => r.status === 409)!, 409, 'PROJECT_NAME_TAKEN');
    // The winner's old name is free again.
    const winner = replies[0]!.status === 200 ? a : b;
    expect((await deploy(platform, m.member.token, uniqueSite(), { name: winner.begin.project.name })).begin.project.name).toBe(
      winner.begin.project.name,
    );
  });

  it('moves the subdomain hold (never the slug); a taken or reserved subdomain is refused with suggestions', async () => {
    const other = await deploy(platform, m.member.token, uniqueSite(), { name: uniqueName() });
    const taken = await patch(m.admin.token, { subdomain: other.begin.project.subdomain });
    expectError(taken, 409, 'SUBDOMAIN_TAKEN');
    expect(taken.body.details.suggestions.length).toBeGreaterThan(0);
    expectError(await patch(m.admin.token, { subdomain: 'api' }), 400, 'SUBDOMAIN_RESERVED');
    expectError(await patch(m.admin.token, { subdomain: 'Not Valid' }), 400, 'SUBDOMAIN_INVALID');
    const fresh = `moved-${Date.now()}`;
    const moved = await patch(m.admin.token, { subdomain: fresh });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ subdomain: fresh, slug: p.slug, production_url: `http://${fresh}.localhost:${platform.port}` });
    // The old subdomain is free for anyone.
    expect(
      (await deploy(platform, m.outsider.token, uniqueSite(), { name: uniqueName(), subdomain: p.subdomain })).begin.project.subdomain,
    ).toBe(p.subdomain);
    p.subdomain = fresh;
  });

  it('authorization: team admins and owners (and an admin API key); a member is 403; outsiders 404', async () => {
    expectError(await patch(undefined, { framework: 'vite' }), 401, 'UNAUTHENTICATED');
    expectError(await patch(m.member.token, { framework: 'vite' }), 403, 'FORBIDDEN');
    expectError(await patch(m.outsider.token, { framework: 'vite' }), 404, 'PROJECT_NOT_FOUND');
    expectError(await patch(m.platformAdmin.token, { framework: 'vite' }), 404, 'PROJECT_NOT_FOUND');
    for (const who of ['owner', 'admin', 'apiKey'] as const) expect((await patch(m[who].token, { framework: 'vite' })).status).toBe(200);
  });
});
