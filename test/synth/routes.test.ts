import { randomBytes, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { routes } from '../../lib/http/routes.ts';
import { createSession } from '../../lib/identity/credential-records.ts';
import { templateRoutes, type TemplateRoute } from '../../local-cloud/api-gateway/api-gateway.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';
import { expectEnvelopeError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, uniqueName, uniqueSite } from '../support/uploads.ts';
import { until } from '../support/wait.ts';

/**
 * What only the template shows about the API (docs/synthesized-mode.md, "In the tests"): every route of the HTTP API
 * reaches its own Lambda, run from its asset with its own role, and answers without a denial; the `$default` route;
 * and the writes of the areas whose suites run in the source mode only (team deletion and its purge worker fired by
 * its schedule, admin attention, feedback, projects), each through its route's Lambda with its role. The rules those
 * suites assert (validation, authorization matrices, races) are the same code in both modes and run once, there.
 */
let platform: TestPlatform;
let template: SynthesizedTemplate;
let roles: Awaited<ReturnType<typeof makeTeamWithRoles>>;
/** The team whose owner sends the sweep's writes (a deletion request among them), apart from the cases' team. */
let sweeper: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let project: { project_id: string; deployment_id: string };

beforeAll(async () => {
  platform = await startTestPlatform({ alterTemplate: (t) => void (template = t) });
  roles = await makeTeamWithRoles();
  sweeper = await makeTeamWithRoles();
  project = (await deploy(platform, roles.owner.token, uniqueSite(), { name: uniqueName() })).begin;
});
afterAll(() => platform?.stop());

/**
 * A request for a route: a read names the test team's project, deployment and team where its path has them; a write
 * names ids that do not exist (its Lambda reads before it refuses), so the sweep changes nothing the cases below use.
 */
function requestFor(route: TemplateRoute): { path: string; admin: boolean } {
  const read = route.method === 'GET';
  const values: Record<string, string> = {
    team: roles.team.id,
    id: read && route.segments[2] === 'projects' ? project.project_id : randomUUID(),
    deployment_id: read ? project.deployment_id : randomUUID(),
    hash: randomBytes(32).toString('hex'),
    name: 'nosuch',
    subdomain: `nosuch-${randomBytes(3).toString('hex')}`,
  };
  const path = `/${route.segments.map((s) => (s.startsWith('{') ? (values[s.slice(1, -1)] ?? randomUUID()) : s)).join('/')}`;
  return { path, admin: route.segments[2] === 'admin' };
}

describe('the HTTP API of the template', () => {
  // A streaming row (a live tail) is a function URL behind the console's distribution, not an HTTP API route.
  const apiRows = routes.filter((r) => !('streaming' in r && r.streaming));

  it('routes exactly the route table, each row to a Lambda of its own, and $default', () => {
    const keysOf = templateRoutes(template).map((r) => r.routeKey);
    expect(keysOf.sort()).toEqual([...apiRows.map((r) => `${r.method} ${r.path}`), '$default'].sort());
    expect(new Set(templateRoutes(template).map((r) => r.functionLogicalId)).size).toBe(apiRows.length + 1);
  });

  it('every route reaches its Lambda, which answers from its asset with its role: no 5xx, no denial in the report', async () => {
    const rows = templateRoutes(template).filter((r) => r.routeKey !== '$default');
    const answers: { route: string; status: number; code: unknown }[] = [];
    // A few at a time: each is a cold start of its Lambda (a worker thread importing its bundle).
    for (let i = 0; i < rows.length; i += 4) {
      await Promise.all(
        rows.slice(i, i + 4).map(async (route) => {
          const { path, admin } = requestFor(route);
          // Signing out ends the session it is given: its own.
          const token =
            route.routeKey === 'POST /api/v1/auth/sign-out'
              ? await createSession(sweeper.owner.user.user_id)
              : admin
                ? roles.platformAdmin.token
                : route.method === 'GET'
                  ? roles.owner.token
                  : sweeper.owner.token;
          const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
          const reply = await platform.api(route.method, path, { token, body });
          answers.push({ route: route.routeKey, status: reply.status, code: reply.body?.code });
        }),
      );
    }
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    // An answer of the platform's own (API Gateway's would be {"message": ...}): the Lambda ran.
    expect(answers.filter((a) => a.status >= 300 && typeof a.code !== 'string')).toEqual([]);
    expect(answers).toHaveLength(apiRows.length);
    expect(platform.synthesized!.usage().flatMap((u) => u.denied.map((d) => d.message))).toEqual([]);
  }, 180_000);

  it('$default: 404 ROUTE_NOT_FOUND for an unknown path and 405 METHOD_NOT_ALLOWED with Allow for a known one', async () => {
    expectEnvelopeError(await platform.api('GET', '/api/v1/nothing-here'), 404, 'ROUTE_NOT_FOUND');
    const reply = await platform.api('DELETE', '/api/v1/team/profile', { token: roles.owner.token });
    expectEnvelopeError(reply, 405, 'METHOD_NOT_ALLOWED');
    expect(reply.headers.get('allow')).toBe('GET, PATCH');
  });
});

describe('writes through their routes', () => {
  it('projects: a rename and the deployments list', async () => {
    const name = uniqueName('Renamed');
    const patched = await platform.api('PATCH', `/api/v1/projects/${project.project_id}`, { token: roles.owner.token, body: { name } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.name).toBe(name);
    const list = await platform.api('GET', `/api/v1/projects/${project.project_id}/deployments`, { token: roles.owner.token });
    expect(list.status).toBe(200);
    expect(list.body.data.deployments.map((d: { id: string; is_live: boolean }) => [d.id, d.is_live])).toEqual([
      [project.deployment_id, true],
    ]);
  });

  it('admin attention: a subscription set, feedback sent and handled, both in the queues', async () => {
    const admin = roles.platformAdmin.token;
    const set = await platform.api('PUT', `/api/v1/admin/teams/${roles.team.id}/subscription`, {
      token: admin,
      body: { plan: 'team', status: 'past_due' },
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({ team_id: roles.team.id, plan: 'team', status: 'past_due', subscription_count: 1 });
    const sent = await platform.api('POST', '/api/v1/feedback', {
      token: roles.member.token,
      body: { message: 'Synthesized.', type: 'bug' },
    });
    expect(sent.status).toBe(201);
    const data = (await platform.api('GET', '/api/v1/admin/attention', { token: admin })).body.data;
    expect(data.billing_attention.past_due.map((r: { team_id: string }) => r.team_id)).toContain(roles.team.id);
    expect(data.feedback_inbox.find((r: { id: string }) => r.id === sent.body.data.id)).toMatchObject({
      message: 'Synthesized.',
      user_email: roles.member.user.email,
    });
    expect((await platform.api('POST', `/api/v1/admin/feedback/${sent.body.data.id}/handled`, { token: admin })).status).toBe(200);
    const after = (await platform.api('GET', '/api/v1/admin/attention', { token: admin })).body.data;
    expect(after.feedback_inbox.map((r: { id: string }) => r.id)).not.toContain(sent.body.data.id);
  });

  it('team deletion: past its deadline the purge worker, fired by its schedule, removes the team and its projects', async () => {
    process.env.TEAM_PURGE_DELAY_SECONDS = '1';
    try {
      const m = await makeTeamWithRoles();
      const subdomain = `purge-${randomBytes(4).toString('hex')}`;
      const done = await deploy(platform, m.owner.token, uniqueSite(), { name: uniqueName(), subdomain });
      expect((await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/')).status).toBe(200);
      expect((await platform.api('POST', '/api/v1/team/deletion', { token: m.owner.token })).status).toBe(202);
      const item = (key: Record<string, string>) =>
        dynamo()
          .send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true }))
          .then((r) => r.Item);
      // The purge is a chain of Lambdas started from their assets (the schedule's, the purge worker's, the deletions'):
      // about 3 s on a quiet machine, and 15 to over 20 s with a second suite running beside this one.
      await until(async () => (await item(keys.team(m.team.id))) === undefined, 'the purge', 60_000);
      expect(await item(keys.project(done.begin.project_id))).toBeUndefined();
      expect((await siteRequest(platform.port, `${subdomain}.localhost:${platform.port}`, '/')).status).toBe(404);
    } finally {
      delete process.env.TEAM_PURGE_DELAY_SECONDS;
    }
  }, 90_000);
});
