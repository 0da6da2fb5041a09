import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site, uniqueName, uniqueSite } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

/**
 * GET /api/v1/projects/{id}/functions and GET /api/v1/projects/{id}/deployments/{deployment_id}:
 * what they answer and who may read them.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let project: { id: string; subdomain: string; deployment: string };

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  const subdomain = `fa-${randomBytes(4).toString('hex')}`;
  const s = site({
    'index.html': `<p>${subdomain}</p>`,
    'functions/zeta.js': 'export default () => new Response("z")',
    'functions/alpha.ts': 'export default (): Response => new Response("a")',
  });
  const done = await deploy(platform, m.member.token, s, { name: uniqueName(), subdomain });
  project = { id: done.begin.project_id, subdomain, deployment: done.begin.deployment_id };
});
afterAll(() => platform?.stop());

const listFunctions = (token: string | undefined, id = project.id) => platform.api('GET', `/api/v1/projects/${id}/functions`, { token });
const getDeployment = (token: string | undefined, deploymentId = project.deployment, id = project.id) =>
  platform.api('GET', `/api/v1/projects/${id}/deployments/${deploymentId}`, { token });

describe('GET /api/v1/projects/{id}/functions', { timeout: 60_000 }, () => {
  it("lists the live deployment's functions by name", async () => {
    const reply = await listFunctions(m.member.token);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      functions: ['alpha', 'zeta'].map((name) => ({
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        name,
        url: `http://${name}-${project.subdomain}.fn.localhost:${platform.port}/`,
        deployment_id: project.deployment,
        entry_path: name === 'alpha' ? 'functions/alpha.ts' : 'functions/zeta.js',
        bundle_bytes: expect.any(Number),
        created_at: expect.any(String),
      })),
      functions_beta_enrolled: false,
    });
  });

  it('is empty for a project with nothing live', async () => {
    const begin = await platform.api('POST', '/api/v1/uploads', {
      token: m.member.token,
      body: { files: uniqueSite().files, project: { name: uniqueName() } },
    });
    expect(begin.status).toBe(201);
    const reply = await listFunctions(m.member.token, begin.body.data.project_id);
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({ functions: [], functions_beta_enrolled: false });
  });

  it('authorization: every role and an API key; 404 outside the team; 401 without credentials', async () => {
    for (const actor of [m.owner, m.admin, m.member, m.apiKey]) expect((await listFunctions(actor.token)).status).toBe(200);
    expectError(await listFunctions(m.outsider.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await listFunctions(m.platformAdmin.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await listFunctions(undefined), 401, 'UNAUTHENTICATED');
    expectError(await listFunctions(m.member.token, 'not-a-uuid'), 404, 'PROJECT_NOT_FOUND');
  });
});

describe('GET /api/v1/projects/{id}/deployments/{deployment_id}', { timeout: 60_000 }, () => {
  it('answers the deployment with its build log and functions', async () => {
    const reply = await getDeployment(m.member.token, project.deployment.toUpperCase());
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      id: project.deployment,
      project_id: project.id,
      team_id: m.team.id,
      status: 'ready',
      label: null,
      created_at: expect.any(String),
      ready_at: expect.any(String),
      file_count: 3,
      total_bytes: expect.any(Number),
      is_live: true,
      build_log: [expect.stringMatching(/^\[functions\] Built alpha \(/), expect.stringMatching(/^\[functions\] Built zeta \(/)],
      functions: ['alpha', 'zeta'],
      // No _redirects or _headers in this deployment.
      serving_rules: { redirects: 0, headers: 0, skipped: [], skipped_count: 0 },
      // A direct upload is not a build: the build fields are there, empty.
      trigger: null,
      target: null,
      branch: null,
      commit_sha: null,
      commit_message: null,
      merge_request: null,
      preview_url: null,
      queued_at: null,
      started_at: null,
      finished_at: null,
      failure_message: null,
      skip_reason: null,
      log_lines: 2,
    });
  });

  it("404 DEPLOYMENT_NOT_FOUND for an unknown id, a non-UUID and another project's deployment", async () => {
    expectError(await getDeployment(m.member.token, '00000000-0000-4000-8000-000000000000'), 404, 'DEPLOYMENT_NOT_FOUND');
    expectError(await getDeployment(m.member.token, 'nope'), 404, 'DEPLOYMENT_NOT_FOUND');
    const other = await deploy(platform, m.member.token, uniqueSite(), { name: uniqueName() });
    expectError(await getDeployment(m.member.token, other.begin.deployment_id), 404, 'DEPLOYMENT_NOT_FOUND');
    expect((await getDeployment(m.member.token, other.begin.deployment_id, other.begin.project_id)).body.data).toMatchObject({
      build_log: [],
      functions: [],
    });
  });

  it('authorization: every role and an API key; 404 outside the team; 401 without credentials', async () => {
    for (const actor of [m.owner, m.admin, m.member, m.apiKey]) expect((await getDeployment(actor.token)).status).toBe(200);
    expectError(await getDeployment(m.outsider.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await getDeployment(m.platformAdmin.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await getDeployment(undefined), 401, 'UNAUTHENTICATED');
  });
});
