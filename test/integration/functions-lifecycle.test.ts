import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { listKeysPage } from '../../lib/aws/s3-lite.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { claimFunctionHostnames } from '../../lib/functions/hostname-claim-records.ts';
import { queuedRuntime } from '../../lib/local/queued-runtime.ts';
import { setFunctionsEnrolment, setTeamPlan } from '../../lib/teams/standing.ts';
import { doorRequest, functionHostname } from '../support/door.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site, uniqueName } from '../support/uploads.ts';
import { until } from '../support/wait.ts';

/**
 * What a project's functions leave when its subdomain changes or it is deleted: they answer at
 * `{name}-{new subdomain}` at once, the old hostnames' claims are released (another team taking the old
 * subdomain deploys a function of the same name), and a deleted project's invocations (records, stored
 * requests, results, console output) are deleted with it.
 */
process.env.FUNCTIONS_ROUTE_CACHE_MS = '0';
process.env.FUNCTIONS_QUEUED_RATE_PER_MINUTE = '100000';

let platform: TestPlatform;
const runtime = queuedRuntime();
type Team = Awaited<ReturnType<typeof makeTeamWithRoles>>;
let a: Team;
let b: Team;

const sub = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;
const claim = async (label: string) =>
  (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.functionHostname(label), ConsistentRead: true }))).Item;
const call = (label: string) => doorRequest(platform.port, functionHostname(label, platform.port));
const patch = (team: Team, projectId: string, body: unknown) =>
  platform.api('PATCH', `/api/v1/projects/${projectId}`, { token: team.owner.token, body });

async function deployHello(team: Team, subdomain: string, says: string, extra: Record<string, string> = {}) {
  const files = {
    'index.html': `<h1>${says}</h1>`,
    'functions/hello.js': `export default () => new Response(${JSON.stringify(says)});`,
    ...extra,
  };
  const done = await deploy(platform, team.owner.token, site(files), { name: uniqueName('Fn'), subdomain });
  return done.begin.project_id as string;
}

beforeAll(async () => {
  platform = await startTestPlatform({ drivers: [() => runtime] });
  a = await makeTeamWithRoles();
  b = await makeTeamWithRoles();
  for (const team of [a, b]) {
    await setFunctionsEnrolment(team.team.id, true);
    await setTeamPlan(team.team.id, 'team');
  }
}, 60_000);
afterAll(async () => {
  await platform?.stop();
});

describe('a subdomain change', () => {
  it('moves the function hostnames: {name}-{new} answers at once, {name}-{old} is free for another team', async () => {
    const [oldSub, newSub] = [sub('old'), sub('new')];
    const projectId = await deployHello(a, oldSub, 'from a', { 'functions/extra.js': `export default () => new Response('extra');` });
    expect((await call(`hello-${oldSub}`)).text).toBe('from a');

    const reply = await patch(a, projectId, { subdomain: newSub });
    expect(reply.status).toBe(200);
    const moved = await call(`hello-${newSub}`);
    expect(moved.status).toBe(200);
    expect(moved.text).toBe('from a');
    expect((await call(`extra-${newSub}`)).text).toBe('extra');
    expect((await call(`hello-${oldSub}`)).status).toBe(404);
    expect(await claim(`hello-${oldSub}`)).toBeUndefined();
    expect(await claim(`extra-${oldSub}`)).toBeUndefined();
    expect(await claim(`hello-${newSub}`)).toMatchObject({ project_id: projectId, name: 'hello' });
    const listed = await platform.api('GET', `/api/v1/projects/${projectId}/functions`, { token: a.owner.token });
    expect(listed.body.data.functions.map((f: { url: string }) => f.url).sort()).toEqual([
      `http://extra-${newSub}.fn.localhost:${platform.port}/`,
      `http://hello-${newSub}.fn.localhost:${platform.port}/`,
    ]);

    // Another team takes the old subdomain and deploys a function of the same name: its build claims the label.
    await deployHello(b, oldSub, 'from b');
    expect((await call(`hello-${oldSub}`)).text).toBe('from b');
    expect((await call(`hello-${newSub}`)).text).toBe('from a');
  });

  it('racing changes to two subdomains: one wins, and the claims are exactly those of the winner', async () => {
    const start = sub('race');
    const projectId = await deployHello(a, start, 'racer');
    const [x, y] = [sub('rx'), sub('ry')];
    const replies = await Promise.all([patch(a, projectId, { subdomain: x }), patch(a, projectId, { subdomain: y })]);
    const won = replies.filter((r) => r.status === 200);
    expect(won.length).toBeGreaterThanOrEqual(1);
    for (const r of replies) if (r.status !== 200) expect(r.status).toBe(409);
    const project = await platform.api('GET', `/api/v1/projects/${projectId}`, { token: a.owner.token });
    const winner = project.body.data.subdomain as string;
    expect([x, y]).toContain(winner);
    const loser = winner === x ? y : x;
    expect(await claim(`hello-${winner}`)).toMatchObject({ project_id: projectId });
    expect(await claim(`hello-${loser}`)).toBeUndefined();
    expect(await claim(`hello-${start}`)).toBeUndefined();
    expect((await call(`hello-${winner}`)).text).toBe('racer');
  });

  it("409 FUNCTION_HOSTNAME_TAKEN when a new hostname is another project's, 400 FUNCTION_HOSTNAME_TOO_LONG past 63 characters; nothing changes", async () => {
    const tag = randomBytes(2).toString('hex');
    // b's function "api-x" on "y{tag}-z" holds the label a's "api" would make on "x-y{tag}-z".
    await deploy(
      platform,
      b.owner.token,
      site({ 'index.html': '<h1>b</h1>', 'functions/api-x.js': `export default () => new Response('b');` }),
      {
        name: uniqueName('Holder'),
        subdomain: `y${tag}-z`,
      },
    );
    const start = sub('held');
    const projectId = (
      await deploy(
        platform,
        a.owner.token,
        site({ 'index.html': '<h1>a</h1>', 'functions/api.js': `export default () => new Response('a');` }),
        {
          name: uniqueName('Mover'),
          subdomain: start,
        },
      )
    ).begin.project_id;
    const taken = await patch(a, projectId, { subdomain: `x-y${tag}-z` });
    expectError(taken, 409, 'FUNCTION_HOSTNAME_TAKEN');
    expect(taken.body.details).toEqual({ subdomain: `x-y${tag}-z`, labels: [`api-x-y${tag}-z`] });

    const long = `l${'o'.repeat(55)}${tag}`;
    const tooLong = await patch(a, projectId, { subdomain: long });
    expectError(tooLong, 400, 'FUNCTION_HOSTNAME_TOO_LONG');
    expect(tooLong.body.details).toEqual({ subdomain: long, labels: [`api-${long}`] });

    const project = await platform.api('GET', `/api/v1/projects/${projectId}`, { token: a.owner.token });
    expect(project.body.data.subdomain).toBe(start);
    expect((await call(`api-${start}`)).text).toBe('a');
    expect((await call(`api-x-y${tag}-z`)).text).toBe('b');
  });
});

describe('deleting a project', () => {
  it('releases its function hostnames and deletes its invocations with their stored request, result and console output', async () => {
    const subdomain = sub('gone');
    // `big` reads, answers and logs more than a record keeps inline, so its three parts are objects; `hello`'s stay in its record.
    const big = `export default async (req) => { const body = await req.text(); console.log('c'.repeat(5000)); return new Response(body + body); };`;
    const projectId = await deployHello(a, subdomain, 'doomed', { 'functions/big.js': big });
    const invokeAndWait = async (name: string, rawBody: string) => {
      const invoked = await platform.api('POST', `/api/v1/public/functions/${subdomain}/${name}`, { rawBody });
      expect(invoked.status).toBe(202);
      await until(async () => (await platform.api('GET', invoked.body.data.poll_url)).body.data.status === 'completed', 'the invocation');
      return invoked.body.data.invocation_id as string;
    };
    const [large, small] = [await invokeAndWait('big', 'p'.repeat(5000)), await invokeAndWait('hello', 'payload')];
    const record = async (id: string) =>
      (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.invocation(id), ConsistentRead: true }))).Item;
    const prefixOf = (id: string) => `invocations/${a.team.id}/${id}/`;
    expect((await listKeysPage(config.bucket('bundles'), prefixOf(large))).keys.sort()).toEqual(
      ['console.json', 'request.json', 'result.json'].map((part) => `${prefixOf(large)}${part}`),
    );
    expect((await listKeysPage(config.bucket('bundles'), prefixOf(small))).keys).toEqual([]);
    expect(
      Object.keys((await record(small))!)
        .filter((name) => name.endsWith('_json'))
        .sort(),
    ).toEqual(['console_json', 'request_json', 'result_json']);

    expect((await platform.api('DELETE', `/api/v1/projects/${projectId}`, { token: a.owner.token })).status).toBe(202);
    await until(
      async () => (await platform.api('GET', `/api/v1/projects/${projectId}`, { token: a.owner.token })).status === 404,
      'the deletion',
    );
    await until(
      async () =>
        (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.project(projectId), ConsistentRead: true })))
          .Item === undefined,
      'the removal',
    );

    for (const id of [large, small]) {
      expect(await record(id)).toBeUndefined();
      expect((await listKeysPage(config.bucket('bundles'), prefixOf(id))).keys).toEqual([]);
    }
    expect(await claim(`hello-${subdomain}`)).toBeUndefined();

    await deployHello(b, subdomain, 'reborn');
    expect((await call(`hello-${subdomain}`)).text).toBe('reborn');
  });

  it('releases every claim the project holds, also one on a subdomain it left (as a publish racing the change leaves)', async () => {
    const [first, second] = [sub('was'), sub('now')];
    const projectId = await deployHello(a, first, 'moving');
    expect((await patch(a, projectId, { subdomain: second })).status).toBe(200);
    expect(await claimFunctionHostnames(projectId, [{ name: 'hello', label: `hello-${first}` }])).toEqual([]);
    expect((await platform.api('DELETE', `/api/v1/projects/${projectId}`, { token: a.owner.token })).status).toBe(202);
    await until(
      async () =>
        (await dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.project(projectId), ConsistentRead: true })))
          .Item === undefined,
      'the removal',
    );
    expect(await claim(`hello-${second}`)).toBeUndefined();
    expect(await claim(`hello-${first}`)).toBeUndefined();
    await deployHello(b, second, 'second owner');
    expect((await call(`hello-${second}`)).text).toBe('second owner');
  });
});
