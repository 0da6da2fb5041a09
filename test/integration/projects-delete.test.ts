import { randomBytes } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { listKeysPage } from '../../lib/aws/s3-lite.ts';
import { sqs } from '../../lib/aws/sqs.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { deleteProject } from '../../lib/lifecycle/project-deletion.ts';
import { queueDriver, type QueueDriver } from '../../lib/local/queue-driver.ts';
import { siteAnalytics } from '../../lib/sites/analytics.ts';
import { workers } from '../../lib/workers.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { siteRequest } from '../support/sites.ts';
import { deploy, site, uniqueName } from '../support/uploads.ts';

/**
 * DELETE /api/v1/projects/{id}: `deleting` at once (nothing answers for the
 * project any more), then the deletions worker removes everything it owned
 * and the project, and its subdomain, name and files are free again.
 */
let platform: TestPlatform;
let driver: QueueDriver;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

const FILES = {
  'index.html': `<h1>${randomBytes(8).toString('hex')}</h1>`,
  'css/site.css': `body{--x:"${randomBytes(8).toString('hex')}"}`,
  'functions/hello.js': `export default () => new Response('hello');`,
};

async function deployProject(name = uniqueName('Doomed'), subdomain = `del-${randomBytes(4).toString('hex')}`) {
  const done = await deploy(platform, m.owner.token, site(FILES), { name, subdomain });
  return {
    id: done.begin.project_id as string,
    uploadId: done.begin.upload_id as string,
    name,
    subdomain,
    missing: done.begin.missing as string[],
  };
}

const remove = (id: string, token: string | null = m.admin.token) =>
  platform.api('DELETE', `/api/v1/projects/${id}`, { token: token ?? undefined });

async function gone(id: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const reply = await platform.api('GET', `/api/v1/projects/${id}`, { token: m.owner.token });
    if (reply.status === 404) return;
    if (Date.now() > deadline) throw new Error(`project ${id} still answers ${reply.status} (${reply.body?.data?.status})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function partition(pk: string) {
  const out = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

const item = async (key: { pk: string; sk: string }) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: key, ConsistentRead: true }))).Item;

beforeAll(async () => {
  driver = queueDriver({ rows: workers.filter((row) => row.name === 'deletions'), pollMs: 50 });
  // A platform of its own: its cases pause the deletions worker and wait for it to be idle.
  platform = await startTestPlatform({ drivers: [() => driver] });
  m = await makeTeamWithRoles();
});
afterAll(() => platform?.stop());

describe('deleting a project', () => {
  it('removes the project and everything it owned; its subdomain, name and files are free again', async () => {
    const project = await deployProject();
    const before = await item(keys.teamProjectCount(m.team.id));
    expect(
      (
        await platform.api('PUT', `/api/v1/projects/${project.id}/env/API_URL`, {
          token: m.admin.token,
          body: { value: 'x', environment: 'production' },
        })
      ).status,
    ).toBeLessThan(300);
    const host = `${project.subdomain}.localhost:${platform.port}`;
    expect((await siteRequest(platform.port, host, '/')).status).toBe(200);
    await siteAnalytics.flush();
    expect((await partition(keys.analyticsDay(project.id, '').pk)).length).toBeGreaterThan(0);
    expect(await item(keys.functionHostname(`hello-${project.subdomain}`))).toBeDefined();
    // The upload session and its record of what it received (an entry per upload request).
    const sessionItems = await partition(keys.uploadSession(project.uploadId).pk);
    expect([...new Set(sessionItems.map((i) => (i.sk as string).replace(/#.*/, '#')))].sort()).toEqual(['RECEIVED#', 'UPLOAD']);

    driver.pause();
    const reply = await remove(project.id);
    expect(reply.status).toBe(202);
    expect(reply.body.data).toEqual({ id: project.id, status: 'deleting' });
    // Nothing answers for it while the worker has not run yet.
    expect((await siteRequest(platform.port, host, '/')).status).toBe(404);
    expect((await platform.api('GET', `/api/v1/projects/${project.id}`, { token: m.owner.token })).body.data.status).toBe('deleting');
    expectError(
      await platform.api('PATCH', `/api/v1/projects/${project.id}`, { token: m.admin.token, body: { name: 'Renamed' } }),
      404,
      'PROJECT_NOT_FOUND',
    );
    driver.resume();
    await gone(project.id);

    expect(await partition(keys.project(project.id).pk)).toEqual([]);
    expect(await partition(keys.uploadSession(project.uploadId).pk)).toEqual([]);
    expect(await partition(keys.analyticsDay(project.id, '').pk)).toEqual([]);
    expect(await item(keys.subdomainHold(project.subdomain))).toBeUndefined();
    expect(await item(keys.projectName(m.team.id, project.name))).toBeUndefined();
    expect(await item(keys.functionHostname(`hello-${project.subdomain}`))).toBeUndefined();
    expect((await item(keys.teamProjectCount(m.team.id)))!.project_count).toBe(before!.project_count - 1);
    const sites = await listKeysPage(config.bucket('sites'), `${m.team.id}/`);
    expect(sites.keys.filter((k) => k.includes(project.id) || k.split('/')[1] === project.name.toLowerCase())).toEqual([]);
    expect((await listKeysPage(config.bucket('bundles'), `functions/${m.team.id}/${project.id}/`)).keys).toEqual([]);

    // The same name and subdomain again: a new project, and every file is sent again (no record of held bytes remains).
    const again = await deployProject(project.name, project.subdomain);
    expect(again.id).not.toBe(project.id);
    expect(again.missing).toHaveLength(Object.keys(FILES).length);
    expect((await siteRequest(platform.port, host, '/')).status).toBe(200);
  });

  it('racing deletes all answer 202 and the project is removed once; a redelivered message finds it gone', async () => {
    const project = await deployProject();
    const replies = await Promise.all(Array.from({ length: 5 }, () => remove(project.id)));
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    await gone(project.id);
    await sqs().send(
      new SendMessageCommand({
        QueueUrl: config.queueUrl('deletions'),
        MessageBody: JSON.stringify({ kind: 'project', project_id: project.id }),
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    await driver.idle();
    expect(await partition(keys.project(project.id).pk)).toEqual([]);
    expectError(await remove(project.id), 404, 'PROJECT_NOT_FOUND');
  });

  it('two runs of the worker for one project at once (a message delivered twice): one removes it, the other finds it gone, the count drops once', async () => {
    const project = await deployProject();
    const countBefore = (await item(keys.teamProjectCount(m.team.id)))!.project_count as number;
    // Marked as DELETE marks it, without a queued message another test file's worker could also take.
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(project.id),
        UpdateExpression: 'SET #s = :d',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':d': 'deleting' },
      }),
    );
    const outcomes = await Promise.all([deleteProject(project.id), deleteProject(project.id)]);
    expect(outcomes.filter((o) => o === 'deleted')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'deleted')).toEqual(['gone']);
    expect(await partition(keys.project(project.id).pk)).toEqual([]);
    expect(await item(keys.subdomainHold(project.subdomain))).toBeUndefined();
    expect((await item(keys.teamProjectCount(m.team.id)))!.project_count).toBe(countBefore - 1);
  });

  it('authorization: admins, the owner and the team API key may delete; a member 403; others 404; no token 401', async () => {
    const project = await deployProject();
    expectError(await remove(project.id, m.member.token), 403, 'FORBIDDEN');
    expectError(await remove(project.id, m.outsider.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await remove(project.id, m.platformAdmin.token), 404, 'PROJECT_NOT_FOUND');
    expectError(await remove(project.id, null), 401, 'UNAUTHENTICATED');
    expectError(await remove('not-a-uuid'), 404, 'PROJECT_NOT_FOUND');
    expect((await platform.api('GET', `/api/v1/projects/${project.id}`, { token: m.owner.token })).body.data.status).toBe('active');
    for (const token of [m.owner.token, m.apiKey.token]) {
      const other = token === m.owner.token ? project : await deployProject();
      expect((await remove(other.id, token)).status).toBe(202);
      await gone(other.id);
    }
  });
});
