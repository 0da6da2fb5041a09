import { randomBytes } from 'node:crypto';
import { GetFunctionCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { config } from '../../lib/config.ts';
import { cloudHostVariables } from '../../lib/functions/hosts/cloud/variables.ts';
import { functionLambdaName } from '../../lib/functions/hosts/cloud/lambda-package.ts';
import type { FunctionRecord } from '../../lib/functions/model.ts';
import { listFunctionRecords } from '../../lib/functions/records.ts';
import type { SynthesizedTemplate } from '../../local-cloud/template/template.ts';
import { setFunctionsEnrolment } from '../../lib/teams/standing.ts';
import { doorRequest, functionHostname } from '../support/door.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { deploy, site } from '../support/uploads.ts';

/**
 * Functions prepared at publish, in the synthesized template: once a publish has committed, the function-lambdas
 * worker makes each function's Lambda (CreateFunction through the IAM proxy, checked against the worker's own
 * role), so the function's first request finds it Active and makes none. Without the worker's grant, the
 * preparation is refused and the first request makes the Lambda itself (the fallback).
 */
process.env.FUNCTIONS_ROUTE_CACHE_MS = '0';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Publishes one function (`hello`) in a new project of a new enrolled team; its record and Lambda name. */
async function publishHello(platform: TestPlatform): Promise<{ record: FunctionRecord; lambdaName: string; subdomain: string }> {
  const roles = await makeTeamWithRoles();
  await setFunctionsEnrolment(roles.team.id, true);
  const subdomain = `prep-${randomBytes(3).toString('hex')}`;
  const published = await deploy(
    platform,
    roles.owner.token,
    site({ 'index.html': '<h1>prepared</h1>', 'functions/hello.js': `export default () => new Response('hello, prepared');` }),
    { name: `Prepared ${subdomain}`, subdomain },
  );
  const [record] = await listFunctionRecords(published.finalize.project_id, published.finalize.deployment_id);
  const prefix = platform.synthesized!.env[cloudHostVariables.namePrefix]!;
  return { record: record!, lambdaName: functionLambdaName(prefix, record!), subdomain };
}

/** GetFunction of the local Lambda service, signed as the test: the configuration, or the error's name. */
async function lambdaState(platform: TestPlatform, name: string): Promise<string> {
  const client = new LambdaClient({ endpoint: platform.synthesized!.awsEndpoint, region: config.awsRegion() });
  try {
    const reply = await client.send(new GetFunctionCommand({ FunctionName: name }));
    return reply.Configuration?.State ?? 'none';
  } catch (error) {
    return (error as Error).name;
  } finally {
    client.destroy();
  }
}

const hello = (platform: TestPlatform, subdomain: string) =>
  doorRequest(platform.port, functionHostname(`hello-${subdomain}`, platform.port));

describe('a publish prepares its functions’ Lambdas', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform();
  }, 180_000);
  afterAll(() => platform?.stop());

  it('after the publish the Lambda appears Active without any request; the first request makes none', async () => {
    const { lambdaName, subdomain } = await publishHello(platform);
    let state = await lambdaState(platform, lambdaName);
    for (let i = 0; i < 150 && state !== 'Active'; i++) {
      await sleep(200);
      state = await lambdaState(platform, lambdaName);
    }
    expect(state).toBe('Active');
    expect(platform.synthesized!.userLambdas.createCalls(lambdaName)).toBe(1);
    const reply = await hello(platform, subdomain);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('hello, prepared');
    expect(platform.synthesized!.userLambdas.createCalls(lambdaName)).toBe(1);
    const usage = platform.synthesized!.usage().find((entry) => entry.functionName.includes('FunctionLambdas'))!;
    expect(usage.denied).toEqual([]);
    expect(usage.actionsUsed).toEqual(
      expect.arrayContaining(['lambda:CreateFunction', 'lambda:GetFunction', 'lambda:TagResource', 'lambda:GetLayerVersion']),
    );
    // Lambda reads the VPC of a function being made with the caller's rights: the grants the stack holds for it are used.
    expect(usage.actionsUsed).toEqual(expect.arrayContaining(['ec2:DescribeSecurityGroups', 'ec2:DescribeSubnets', 'ec2:DescribeVpcs']));
  }, 120_000);
});

/** The worker's role without its CreateFunction statement, as if the stack had not granted it. */
function withoutWorkerCreateFunction(template: SynthesizedTemplate): void {
  const [, worker] = Object.entries(template.resources).find(
    ([id, resource]) => resource.Type === 'AWS::Lambda::Function' && id.startsWith('WorkersFunctionLambdas'),
  )!;
  const roleId = worker.Properties!.Role['Fn::GetAtt'][0] as string;
  let removed = 0;
  for (const resource of Object.values(template.resources)) {
    const documents =
      resource.Type === 'AWS::IAM::Policy' && JSON.stringify(resource.Properties!.Roles).includes(roleId)
        ? [resource.Properties!.PolicyDocument]
        : resource.Type === 'AWS::IAM::Role' && resource === template.resources[roleId]
          ? (resource.Properties!.Policies ?? []).map((p: { PolicyDocument: unknown }) => p.PolicyDocument)
          : [];
    for (const document of documents) {
      const before = document.Statement.length;
      document.Statement = document.Statement.filter((s: { Action: unknown }) => ![s.Action].flat().includes('lambda:CreateFunction'));
      removed += before - document.Statement.length;
    }
  }
  expect(removed).toBe(1);
}

describe('a publish whose preparation fails', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({ alterTemplate: withoutWorkerCreateFunction });
  }, 180_000);
  afterAll(() => platform?.stop());

  it('the worker is refused CreateFunction; the first request makes the Lambda and is answered', async () => {
    const { lambdaName, subdomain } = await publishHello(platform);
    const denial = () =>
      platform
        .synthesized!.usage()
        .find((entry) => entry.functionName.includes('FunctionLambdas'))
        ?.denied.find((d) => d.action === 'lambda:CreateFunction');
    for (let i = 0; i < 150 && !denial(); i++) await sleep(200);
    expect(denial()?.message).toContain('is not authorized to perform: lambda:CreateFunction');
    expect(await lambdaState(platform, lambdaName)).toBe('ResourceNotFoundException');
    expect(platform.synthesized!.userLambdas.createCalls(lambdaName)).toBe(0);
    const reply = await hello(platform, subdomain);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('hello, prepared');
    // It waited for the Lambda to be made.
    expect(reply.headers['x-scaler-http-cold-start']).toBe('true');
    expect(platform.synthesized!.userLambdas.createCalls(lambdaName)).toBe(1);
  }, 120_000);
});
