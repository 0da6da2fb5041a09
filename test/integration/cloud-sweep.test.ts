import { randomBytes, randomUUID } from 'node:crypto';
import {
  CreateDistributionWithTagsCommand,
  CreateDistributionCommand,
  GetDistributionCommand,
  GetDistributionConfigCommand,
  type DistributionConfig,
} from '@aws-sdk/client-cloudfront';
import { CreateFunctionCommand, GetFunctionCommand } from '@aws-sdk/client-lambda';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { cloudfront } from '../../lib/aws/cloudfront.ts';
import { lambda } from '../../lib/aws/lambda.ts';
import { signer } from '../../lib/aws/signer.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { sweepDomainDistributions } from '../../lib/domains/distribution-sweep.ts';
import { DOMAIN_ID_TAG } from '../../lib/domains/tls-distribution.ts';
import { functionLambdaName, functionLambdaTags, functionPackage } from '../../lib/functions/hosts/cloud/lambda-package.ts';
import { sweepFunctionLambdas } from '../../lib/functions/hosts/cloud/lambda-sweep.ts';
import { listFunctionRecords } from '../../lib/functions/records.ts';
import type { FunctionRecord } from '../../lib/functions/model.ts';
import { setFunctionsEnrolment, setTeamPlan } from '../../lib/teams/standing.ts';
import { handler as cloudSweep } from '../../handlers/workers/cloud-sweep.ts';
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import { scheduler } from '../../lib/aws/scheduler.ts';
import { localWorkerArn, rateDueAt } from '../../lib/local/scheduler-driver.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, putMissing, site, uniqueName } from '../support/uploads.ts';

/**
 * The sweep of cloud resources no record names (handlers/workers/cloud-sweep.ts), against moto's Lambda and
 * CloudFront: user-function Lambdas are made as the cloud door makes them (name, package, `slipway:*` tags),
 * distributions as TLS makes them (tagged with their domain). A moto of this file's own: the sweep looks at
 * everything in the account.
 */
let platform: TestPlatform;
let team: Awaited<ReturnType<typeof makeTeamWithRoles>>;
let role: string;
const prefix = `sweep${randomBytes(3).toString('hex')}-fn-`;

/** An IAM role in moto (its Lambda refuses a function whose role does not exist): IAM's query API, signed. */
async function createRole(): Promise<string> {
  const body = new URLSearchParams({
    Action: 'CreateRole',
    Version: '2010-05-08',
    RoleName: `sweep-${randomBytes(4).toString('hex')}`,
    AssumeRolePolicyDocument: JSON.stringify({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }],
    }),
  });
  const request = await signer('iam', 'us-east-1').sign(`${platform.awsEndpoint}/`, {
    method: 'POST',
    body: body.toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const text = await (await fetch(request)).text();
  return /<Arn>([^<]+)<\/Arn>/.exec(text)![1]!;
}

/** A user-function Lambda as the cloud door makes it; `tags` overrides what it is tagged with. */
async function makeLambda(name: string, tags: Record<string, string>): Promise<string> {
  await lambda().send(
    new CreateFunctionCommand({
      FunctionName: name,
      Runtime: 'nodejs22.x',
      Handler: 'index.handler',
      Role: role,
      Code: { ZipFile: functionPackage(Buffer.from('export default () => new Response("x");')) },
      Tags: tags,
    }),
  );
  return name;
}

const exists = (name: string) =>
  lambda()
    .send(new GetFunctionCommand({ FunctionName: name }))
    .then(
      () => true,
      (error: Error) => (error.name === 'ResourceNotFoundException' ? false : Promise.reject(error)),
    );

async function deployFunctions(
  files: Record<string, string>,
  projectId?: string,
): Promise<{ projectId: string; records: FunctionRecord[] }> {
  const s = site({ 'index.html': `<h1>${randomBytes(4).toString('hex')}</h1>`, ...files });
  let deploymentId: string;
  if (projectId) {
    const begin = await platform.api('POST', `/api/v1/projects/${projectId}/uploads`, {
      token: team.owner.token,
      body: { files: s.files },
    });
    await putMissing(platform, team.owner.token, begin.body.data.upload_id, begin.body.data.missing, s);
    expect((await platform.api('POST', `/api/v1/uploads/${begin.body.data.upload_id}/finalize`, { token: team.owner.token })).status).toBe(
      200,
    );
    deploymentId = begin.body.data.deployment_id;
  } else {
    const done = await deploy(platform, team.owner.token, s, { name: uniqueName('Sweep') });
    projectId = done.begin.project_id as string;
    deploymentId = done.begin.deployment_id;
  }
  return { projectId: projectId!, records: await listFunctionRecords(projectId!, deploymentId) };
}

beforeAll(async () => {
  platform = await startTestPlatform({ ownAwsEndpoint: true, drivers: [] });
  team = await makeTeamWithRoles();
  await setFunctionsEnrolment(team.team.id, true);
  await setTeamPlan(team.team.id, 'team');
  role = await createRole();
}, 120_000);
afterAll(async () => {
  await platform?.stop();
});

describe('the sweep of user-function Lambdas', () => {
  it('deletes a Lambda no record names (deleted deployment, project gone or deleting, team gone) and keeps every named one', async () => {
    const first = await deployFunctions({ 'functions/hello.js': `export default () => new Response('v1');` });
    const second = await deployFunctions({ 'functions/hello.js': `export default () => new Response('v2');` }, first.projectId);
    const [v1, v2] = [first.records[0]!, second.records[0]!];
    expect(v1.bundle_sha256).not.toBe(v2.bundle_sha256);
    const other = await deployFunctions({ 'functions/other.js': `export default () => new Response('other');` });
    const doomed = await deployFunctions({ 'functions/doomed.js': `export default () => new Response('doomed');` });
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(doomed.projectId),
        UpdateExpression: 'SET #s = :d',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':d': 'deleting' },
      }),
    );

    // Named: both deployments' bundles (promote may bring v1 back), and a Lambda of before project tags, found through its team.
    const kept = [
      await makeLambda(functionLambdaName(prefix, v1), functionLambdaTags(v1)),
      await makeLambda(functionLambdaName(prefix, v2), functionLambdaTags(v2)),
      await makeLambda(functionLambdaName(prefix, other.records[0]!), {
        'slipway:function-id': other.records[0]!.function_id,
        'slipway:team-id': team.team.id,
      }),
      // Under the prefix but not tagged by the platform: not the sweep's to judge.
      await makeLambda(`${prefix}untagged`, {}),
    ];
    const orphanBundle = { ...v1, bundle_sha256: 'f'.repeat(64) };
    const swept = [
      // A bundle of a deployment that is gone.
      await makeLambda(functionLambdaName(prefix, orphanBundle), functionLambdaTags(orphanBundle)),
      // A project being deleted, and one that is gone.
      await makeLambda(functionLambdaName(prefix, doomed.records[0]!), functionLambdaTags(doomed.records[0]!)),
      await makeLambda(`${prefix}gone-project`, functionLambdaTags({ ...v1, project_id: randomUUID() })),
      // Made before project tags, of a team that is gone.
      await makeLambda(`${prefix}gone-team`, { 'slipway:function-id': randomUUID(), 'slipway:team-id': randomUUID() }),
    ];
    // Outside the prefix: never looked at, whatever its tags.
    const outside = await makeLambda(
      `elsewhere-${randomBytes(3).toString('hex')}`,
      functionLambdaTags({ ...v1, project_id: randomUUID() }),
    );

    // Too young: a Lambda being made has no record yet; nothing goes.
    const early = await sweepFunctionLambdas({ prefix, minAgeMs: 3_600_000 });
    expect(early).toEqual({ examined: 8, kept: 8, deleted: [] });

    const report = await sweepFunctionLambdas({ prefix, minAgeMs: 0 });
    expect(report.examined).toBe(8);
    expect(report.kept).toBe(4);
    expect(report.deleted.sort()).toEqual([...swept].sort());
    for (const name of kept) expect(await exists(name), name).toBe(true);
    for (const name of swept) expect(await exists(name), name).toBe(false);
    expect(await exists(outside)).toBe(true);
    expect(await sweepFunctionLambdas({ prefix, minAgeMs: 0 })).toEqual({ examined: 4, kept: 4, deleted: [] });
  }, 120_000);
});

describe('the sweep of domain distributions', () => {
  const baseConfig = (reference: string): DistributionConfig => ({
    CallerReference: reference,
    Comment: 'sweep test',
    Enabled: true,
    Origins: {
      Quantity: 1,
      Items: [
        {
          Id: 'site',
          DomainName: 'origin.example.test',
          CustomOriginConfig: { HTTPPort: 80, HTTPSPort: 443, OriginProtocolPolicy: 'https-only' },
        },
      ],
    },
    DefaultCacheBehavior: {
      TargetOriginId: 'site',
      ViewerProtocolPolicy: 'redirect-to-https',
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
    },
  });
  async function distribution(domainId: string | null): Promise<string> {
    const reference = randomUUID();
    if (domainId === null)
      return (await cloudfront().send(new CreateDistributionCommand({ DistributionConfig: baseConfig(reference) }))).Distribution!.Id!;
    const reply = await cloudfront().send(
      new CreateDistributionWithTagsCommand({
        DistributionConfigWithTags: {
          DistributionConfig: baseConfig(reference),
          Tags: { Items: [{ Key: DOMAIN_ID_TAG, Value: domainId }] },
        },
      }),
    );
    return reply.Distribution!.Id!;
  }
  const domainItem = (id: string, distributionId: string | null, deletedAt: string | null = null, sslStatus = 'issued') =>
    dynamo().send(
      new PutCommand({
        TableName: config.tableName(),
        Item: {
          ...keys.domain(id),
          type: 'domain',
          id,
          domain: `${id.slice(0, 8)}.example.test`,
          status: 'verified',
          ssl_status: sslStatus,
          distribution_id: distributionId,
          deleted_at: deletedAt,
        },
      }),
    );
  const gone = (id: string) =>
    cloudfront()
      .send(new GetDistributionCommand({ Id: id }))
      .then(
        () => false,
        (error: Error) => (error.name === 'NoSuchDistribution' ? true : Promise.reject(error)),
      );
  const enabled = async (id: string) => (await cloudfront().send(new GetDistributionConfigCommand({ Id: id }))).DistributionConfig!.Enabled;

  it("disables, then deletes, a distribution its domain no longer names (a twin, a gone or removed domain, a failed attempt's); leaves the domain's own, one being made, and untagged ones", async () => {
    const [live, removed, making] = [randomUUID(), randomUUID(), randomUUID()];
    const own = await distribution(live);
    await domainItem(live, own);
    const twin = await distribution(live);
    const orphan = await distribution(randomUUID());
    const ofRemoved = await distribution(removed);
    await domainItem(removed, ofRemoved, new Date().toISOString());
    const untagged = await distribution(null);
    // An attempt has made it and not recorded it yet: the domain is provisioning with no distribution.
    const inTheMaking = await distribution(making);
    await domainItem(making, null, null, 'provisioning');
    const doomed = [twin, orphan, ofRemoved];

    // The handler, as the schedule invokes it: the Lambda part is off without a prefix (no user-function Lambdas here).
    process.env.SWEEP_MIN_AGE_SECONDS = '0';
    const first = await cloudSweep();
    delete process.env.SWEEP_MIN_AGE_SECONDS;
    expect(first.lambdas).toBeNull();
    // The schedule's run sweeps live tails' queues too (functions-tail.test.ts has its cases): none in this moto.
    expect(first.tails).toEqual({ kept: 0, removed: [] });
    expect(first.distributions!.disabled.sort()).toEqual([...doomed].sort());
    for (const id of doomed) expect(await enabled(id)).toBe(false);

    const deleted = new Set<string>();
    for (let round = 0; round < 10 && deleted.size < doomed.length; round++) {
      for (const id of (await sweepDomainDistributions()).deleted) deleted.add(id);
    }
    expect([...deleted].sort()).toEqual([...doomed].sort());
    for (const id of doomed) expect(await gone(id)).toBe(true);
    for (const id of [own, untagged, inTheMaking]) expect(await enabled(id)).toBe(true);

    // The attempt that was making one failed without recording it: the next sweep takes that one down too.
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.domain(making),
        UpdateExpression: 'SET ssl_status = :f',
        ExpressionAttributeValues: { ':f': 'failed' },
      }),
    );
    expect((await sweepDomainDistributions()).disabled).toEqual([inTheMaking]);
  }, 60_000);
});

describe('its schedule', () => {
  it('the local platform provisions the recurring schedule the stack makes (rate(1 hour), the worker as target), for the scheduler driver to fire', async () => {
    const schedule = await scheduler().send(new GetScheduleCommand({ Name: 'cloud-sweep', GroupName: config.scheduleGroup() }));
    expect(schedule).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: localWorkerArn('cloud-sweep'), Input: '{}' },
    });
    const created = schedule.CreationDate!.getTime();
    expect(rateDueAt(schedule.ScheduleExpression, created)).toBe(created + 3_600_000);
  });
});
