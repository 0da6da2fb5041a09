import { execFile } from 'node:child_process';
import { CLOUD_STORAGE_ORIGINS, consoleContentSecurityPolicy } from '../../lib/http/console-headers.ts';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Stack, type CfnElement } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bucketDefinitions,
  queueDefinitions,
  scheduleGroupDefinition,
  secretDefinitions,
  tableDefinition,
  type SecretName,
} from '../../lib/resources.ts';
import { fallbackRoute, routeKey, routes, type ResourceUse, type RouteRow } from '../../lib/http/routes.ts';
import { workers, type WorkerRow } from '../../lib/workers.ts';
import { bucketReadActions, bucketWriteActions, scheduleWriteActions, tableReadActions, tableWriteActions } from '../../infra/grants.ts';
import { bundleSettings, repoRoot, requireBanner } from '../../infra/bundling.ts';
import { readSettings } from '../../infra/context.ts';
import { computeSubnets } from '../../infra/functions-network.ts';
import { type SlipwayStack } from '../../infra/stack.ts';
import { SlipwayState } from '../../infra/state.ts';
import { SlipwayWorkers } from '../../infra/workers.ts';
import { scratchApp, withoutBundling } from '../support/stack-synth.ts';
import { ensureSynthesized } from '../../local-cloud/template/assembly.ts';
import { flattenNestedStacks, readTemplateFile } from '../../local-cloud/template/template.ts';
import { actionsOfRole as actionsOfRoleIn, policyDocuments, statementsOfRole as statementsOfRoleIn } from '../support/iam-policies.ts';
import { slipwayTestContext, synthesizedSlipway } from '../support/slipway-stack.ts';

/**
 * The stack is synthesized once for the whole file, without bundling (the
 * bundles are checked in the shared cloud assembly, below).
 */
const corsOrigin = slipwayTestContext.corsOrigins;
/** Rows behind the HTTP API; a streaming row is a function URL behind the console's distribution instead. */
const rows = (routes as readonly RouteRow[]).filter((row) => !row.streaming);
const streamingRows = (routes as readonly RouteRow[]).filter((row) => row.streaming);
let stack: SlipwayStack;
let template: Template;
let templateFile: string;
let outdir: string;
let cfnLint: ReturnType<typeof lintTemplates>;
type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };
let resources: Record<string, Resource>;

beforeAll(() => {
  ({ stack, outdir, templateFile } = synthesizedSlipway());
  template = Template.fromJSON(JSON.parse(fs.readFileSync(templateFile, 'utf8')));
  // The API's routes live in a nested stack (infra/api.ts): read it in place, as the synthesized mode does.
  resources = flattenNestedStacks(outdir, template.toJSON()) as Record<string, Resource>;
  // cfn-lint takes half a minute of a core of its own: it runs while the other cases do, and its case reads the result.
  cfnLint = lintTemplates(outdir);
  cfnLint.catch(() => undefined);
}, 300_000);

/** cfn-lint on the stack's template and its nested stacks' (*.nested.template.json), as JSON findings. */
async function lintTemplates(dir: string): Promise<{ templates: string[]; code: number; stdout: string }> {
  const templates = fs.readdirSync(dir).filter((f) => f.endsWith('.template.json'));
  // cfn-lint's exit code is a bit mask: 2 = error, 4 = warning, 8 = informational.
  // cwd: the repository's .cfnlintrc.yaml applies (it ignores W3005 only, with its reason).
  const result = await promisify(execFile)('cfn-lint', ['--format', 'json', ...templates.map((f) => path.join(dir, f))], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  return { templates, ...result };
}

/** What each use may grant; a role holding anything else is over-privileged. */
const allowedFor: Record<ResourceUse, readonly string[]> = {
  'table:read': tableReadActions,
  'table:write': tableWriteActions,
  'table:analytics': ['dynamodb:UpdateItem'],
  'sites:read': [...bucketReadActions, 's3:ListBucket'],
  'sites:write': [...bucketWriteActions, 's3:ListBucket'],
  'bundles:read': [...bucketReadActions, 's3:ListBucket'],
  'bundles:write': [...bucketWriteActions, 's3:ListBucket'],
  'invocations:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'deletions:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'screenshots:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'abuseScans:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'sslRetries:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'geoFilters:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'builds:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'functionLambdas:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'callbacks:send': ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'],
  'tails:watch': ['sqs:CreateQueue', 'sqs:TagQueue', 'sqs:DeleteQueue', 'sqs:ReceiveMessage', 'sqs:DeleteMessage'],
  'tails:send': ['sqs:SendMessage'],
  'tails:sweep': ['sqs:ListQueueTags', 'sqs:GetQueueAttributes', 'sqs:DeleteQueue', 'sqs:ListQueues'],
  'builds:run': ['codebuild:StartBuild', 'codebuild:BatchGetBuilds', 'codebuild:StopBuild'],
  'scheduler:write': [...scheduleWriteActions, 'iam:PassRole'],
  'mail:send': ['ses:SendEmail'],
  'secrets:gitState': ['secretsmanager:GetSecretValue'],
  'secrets:forgeSigning': ['secretsmanager:GetSecretValue'],
  'secrets:envEncryption': ['secretsmanager:GetSecretValue'],
  'secrets:billingWebhook': ['secretsmanager:GetSecretValue'],
  'secrets:siteOrigin': ['secretsmanager:GetSecretValue'],
  'dns:zones': [
    'route53:CreateHostedZone',
    'route53:DeleteHostedZone',
    'route53:GetHostedZone',
    'route53:ListResourceRecordSets',
    'route53:ChangeResourceRecordSets',
  ],
  'tls:provision': [
    'acm:RequestCertificate',
    'acm:AddTagsToCertificate',
    'acm:DescribeCertificate',
    'acm:DeleteCertificate',
    'cloudfront:CreateDistribution',
    'cloudfront:TagResource',
    'cloudfront:GetDistribution',
    'cloudfront:GetDistributionConfig',
    'cloudfront:UpdateDistribution',
    'cloudfront:DeleteDistribution',
    'cloudfront:ListDistributions',
    'route53:ChangeResourceRecordSets',
    'sqs:SendMessage',
    'sqs:GetQueueAttributes',
    'sqs:GetQueueUrl',
  ],
  'cdn:distributions': ['cloudfront:GetDistributionConfig', 'cloudfront:UpdateDistribution'],
  'cdn:sweep': [
    'cloudfront:ListDistributions',
    'cloudfront:ListTagsForResource',
    'cloudfront:GetDistribution',
    'cloudfront:GetDistributionConfig',
    'cloudfront:UpdateDistribution',
    'cloudfront:DeleteDistribution',
  ],
};
const logWrites = ['logs:CreateLogStream', 'logs:PutLogEvents'];

const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
/**
 * CDK's own handler that copies the console's built files into their bucket at
 * deploy (BucketDeployment): its function, role and policy. It is no platform
 * function; what it may do is checked on its own ('the console' below).
 */
const isConsoleDeployer = (id: string) => id.startsWith('CustomCDKBucketDeployment');
const platformFunctions = () => ofType('AWS::Lambda::Function').filter(([id]) => !isConsoleDeployer(id));

const actionsOfRole = (roleId: string, of: Record<string, Resource> = resources) => actionsOfRoleIn(of, roleId);

/** The integration behind a route resource, and the function that integration calls. */
function functionBehindRoute(route: Resource): string {
  const target = JSON.stringify(route.Properties.Target);
  const integrationId = Object.keys(resources).find(
    (id) => resources[id]!.Type === 'AWS::ApiGatewayV2::Integration' && target.includes(`"Ref":"${id}"`),
  );
  expect(integrationId, `integration for ${route.Properties.RouteKey}`).toBeDefined();
  const uri = resources[integrationId!]!.Properties.IntegrationUri;
  expect(uri).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Arn'] });
  return uri['Fn::GetAtt'][0];
}

describe('API: one Lambda per route row', () => {
  it('makes exactly one function per route row, on Node 22 arm64 (or the architecture its run-time packages were installed for), described by its route key', () => {
    const routeFunctions = ofType('AWS::Lambda::Function').filter(([, r]) => String(r.Properties.Description).startsWith('Slipway route '));
    // A streaming row has its function too (behind a function URL, described "... (streaming)").
    expect(routeFunctions).toHaveLength(rows.length + streamingRows.length);
    for (const row of rows) {
      const fn = stack.api.routeFunctions.get(routeKey(row));
      expect(fn, routeKey(row)).toBeDefined();
      const resource = resources[logicalId(fn!.fn)]!;
      expect(resource.Properties).toMatchObject({
        Description: `Slipway route ${routeKey(row)}`,
        Runtime: 'nodejs22.x',
        Architectures: [row.runtimePackages?.architecture ?? 'arm64'],
        Handler: 'index.handler',
        MemorySize: row.memoryMb ?? 512,
        Timeout: row.timeoutSeconds ?? 10,
      });
    }
    const ids = new Set(rows.map((row) => logicalId(stack.api.routeFunctions.get(routeKey(row))!.fn)));
    expect(ids.size).toBe(rows.length);
  });

  it('wires each route key to its own function', () => {
    const routeResources = ofType('AWS::ApiGatewayV2::Route');
    for (const row of rows) {
      const matching = routeResources.filter(([, r]) => r.Properties.RouteKey === `${row.method} ${row.path}`);
      expect(matching, routeKey(row)).toHaveLength(1);
      expect(functionBehindRoute(matching[0]![1])).toBe(logicalId(stack.api.routeFunctions.get(routeKey(row))!.fn));
      expect(matching[0]![1].Properties.AuthorizationType ?? 'NONE').toBe('NONE');
    }
    // Row routes plus $default, nothing else.
    expect(routeResources).toHaveLength(rows.length + 1);
  });

  it("serves each streaming route (a live tail) from a response-streaming function URL that the console's distribution routes to by path", () => {
    expect(streamingRows.map(routeKey)).toEqual(['GET /api/v1/projects/{id}/functions/{name}/tail']);
    const urls = ofType('AWS::Lambda::Url');
    for (const row of streamingRows) {
      const fnId = logicalId(stack.api.routeFunctions.get(routeKey(row))!.fn);
      const url = urls.find(([, u]) => JSON.stringify(u.Properties.TargetFunctionArn).includes(`"${fnId}"`));
      expect(url?.[1].Properties).toMatchObject({ AuthType: 'NONE', InvokeMode: 'RESPONSE_STREAM' });
      const [, distribution] = ofType('AWS::CloudFront::Distribution').find(([, d]) =>
        String(d.Properties.DistributionConfig.Comment).startsWith('Slipway console'),
      )!;
      const behavior = distribution.Properties.DistributionConfig.CacheBehaviors.find(
        (b: { PathPattern: string }) => b.PathPattern === '/api/v1/projects/*/functions/*/tail',
      );
      expect(behavior).toMatchObject({ AllowedMethods: ['GET', 'HEAD', 'OPTIONS'], ViewerProtocolPolicy: 'https-only' });
      // Before /api/*, so CloudFront matches it first.
      const order = distribution.Properties.DistributionConfig.CacheBehaviors.map((b: { PathPattern: string }) => b.PathPattern);
      expect(order.indexOf('/api/v1/projects/*/functions/*/tail')).toBeLessThan(order.indexOf('/api/*'));
    }
  });

  it('sends every unmatched request to the fallback handler through $default', () => {
    const defaults = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => r.Properties.RouteKey === '$default');
    expect(defaults).toHaveLength(1);
    expect(functionBehindRoute(defaults[0]![1])).toBe(logicalId(stack.api.fallbackFunction.fn));
    expect(fallbackRoute.uses).toEqual([]);
  });

  it('lets API Gateway, and only API Gateway, invoke the route functions, through invoke roles that name exactly them', () => {
    const apiFunctions = [...rows.map((row) => stack.api.routeFunctions.get(routeKey(row))!), stack.api.fallbackFunction];
    const apiFunctionIds = apiFunctions.map((fn) => logicalId(fn.fn));
    // No resource-based permission: one per route would cost a resource each, against the 500 of a stack.
    const permissions = ofType('AWS::Lambda::Permission').filter(([, p]) =>
      apiFunctionIds.some((id) => JSON.stringify(p.Properties.FunctionName).includes(`"${id}"`)),
    );
    expect(permissions).toEqual([]);
    const invoked = new Map<string, string>();
    for (const [id, integration] of ofType('AWS::ApiGatewayV2::Integration')) {
      const fnId = integration.Properties.IntegrationUri['Fn::GetAtt'][0] as string;
      expect(integration.Properties, id).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      const credentials = integration.Properties.CredentialsArn;
      expect(credentials, id).toEqual({ 'Fn::GetAtt': [expect.any(String), 'Arn'] });
      const roleId = credentials['Fn::GetAtt'][0] as string;
      const role = resources[roleId]!;
      expect(role.Properties.AssumeRolePolicyDocument.Statement).toEqual([
        { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'apigateway.amazonaws.com' } },
      ]);
      // The role may invoke this integration's function: its ARN exactly (no version, no wildcard).
      const statements = statementsOfRoleIn(resources, roleId);
      expect(
        statements.every((st) => st.Action === 'lambda:InvokeFunction' && st.Effect === 'Allow'),
        roleId,
      ).toBe(true);
      expect(
        statements.flatMap((st) => [st.Resource].flat()),
        roleId,
      ).toContainEqual({ 'Fn::GetAtt': [fnId, 'Arn'] });
      invoked.set(fnId, roleId);
    }
    expect([...invoked.keys()].sort()).toEqual([...apiFunctionIds].sort());
    // Every invoke role names route functions and nothing else.
    for (const roleId of new Set(invoked.values())) {
      // All of a role's grants in the policies read above: none moved to an overflow managed policy.
      expect(
        ofType('AWS::IAM::ManagedPolicy').filter(([, p]) => JSON.stringify(p.Properties.Roles ?? []).includes(`"${roleId}"`)),
        roleId,
      ).toEqual([]);
      for (const resource of statementsOfRoleIn(resources, roleId).flatMap((st) => [st.Resource].flat()) as {
        'Fn::GetAtt': [string, string];
      }[]) {
        expect(apiFunctionIds, roleId).toContain(resource['Fn::GetAtt'][0]);
      }
    }
  });

  it('answers CORS preflights for the configured origins', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.objectLike({
        AllowOrigins: [corsOrigin],
        AllowCredentials: true,
        AllowMethods: Match.arrayWith(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
        AllowHeaders: Match.arrayWith(['authorization', 'content-type', 'x-team-id']),
      }),
    });
  });

  it('logs every request of the auto-deployed $default stage', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('\\$context\\.requestId') },
    });
  });
});

describe('bundles', () => {
  it('load the credential providers left out of the bundle only lazily, never at import', { timeout: 900_000 }, async () => {
    // The bundles `cdk synth` made of the current sources (npm test's synthesized project made them before any test ran).
    const assembly = await ensureSynthesized();
    const bundles = fs
      .readdirSync(assembly)
      .filter((dir) => dir.startsWith('asset.') && fs.existsSync(path.join(assembly, dir, 'index.mjs')))
      .map((dir) => fs.readFileSync(path.join(assembly, dir, 'index.mjs'), 'utf8'));
    expect(bundles.length).toBeGreaterThanOrEqual(rows.length);
    for (const code of bundles) {
      expect(code.startsWith(requireBanner)).toBe(true);
      for (const external of bundleSettings.externalModules) {
        // A static import would fail at cold start on Lambda, where these packages are absent.
        expect(code).not.toMatch(new RegExp(`(from|import)\\s*"${external.replace(/[/.]/g, '\\$&')}"`));
      }
    }
  });
});

describe('workers', () => {
  it('makes one function per worker row and wires its trigger', () => {
    for (const row of workers) {
      const fn = stack.workers.workerFunctions.get(row.name);
      expect(fn, row.name).toBeDefined();
      const fnId = logicalId(fn!.fn);
      // A container-image worker runs its image's Node 22 (test/infra/screenshots-capture.test.ts).
      expect(resources[fnId]!.Properties).toMatchObject(
        row.image
          ? { Description: `Slipway worker ${row.name}`, PackageType: 'Image' }
          : { Description: `Slipway worker ${row.name}`, Runtime: 'nodejs22.x' },
      );
      if (row.trigger.kind === 'queue') {
        const queueId = logicalId(stack.state.queues[row.trigger.queue]);
        template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
          FunctionName: { Ref: fnId },
          EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
          BatchSize: row.trigger.batchSize,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        });
      } else {
        const schedulerRoleId = logicalId(stack.state.schedulerRole);
        expect(actionsOfRole(schedulerRoleId)).toContain('lambda:InvokeFunction');
        template.hasResourceProperties('AWS::IAM::Policy', {
          Roles: [{ Ref: schedulerRoleId }],
          PolicyDocument: {
            Statement: Match.arrayWith([Match.objectLike({ Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [fnId, 'Arn'] } })]),
          },
        });
        if (row.trigger.kind === 'rate') {
          // A recurring row's own schedule, in the platform's group, invoking it through the scheduler role.
          template.hasResourceProperties('AWS::Scheduler::Schedule', {
            Name: row.name,
            GroupName: stack.resolve(stack.state.scheduleGroup.scheduleGroupName),
            ScheduleExpression: `rate(${row.trigger.every})`,
            FlexibleTimeWindow: { Mode: 'OFF' },
            Target: { Arn: { 'Fn::GetAtt': [fnId, 'Arn'] }, RoleArn: { 'Fn::GetAtt': [schedulerRoleId, 'Arn'] }, Input: '{}' },
          });
          continue;
        }
        // Every function allowed to create schedules learns this target's ARN.
        const arnVar = row.trigger.targetArnEnvVar;
        const fixedName = resources[fnId]!.Properties.FunctionName as string;
        const schedulingFunctions = [
          ...rows.filter((r) => r.uses.includes('scheduler:write')).map((r) => stack.api.routeFunctions.get(routeKey(r))!),
          ...workers.filter((w) => w.uses.includes('scheduler:write')).map((w) => stack.workers.workerFunctions.get(w.name)!),
        ];
        for (const scheduling of schedulingFunctions) {
          const value = JSON.stringify(resources[logicalId(scheduling.fn)]!.Properties.Environment.Variables[arnVar]);
          expect(value, `${arnVar} of ${scheduling.node.path}`).toContain(`:function:${fixedName}`);
        }
      }
    }
    const workerFunctions = ofType('AWS::Lambda::Function').filter(([, r]) =>
      String(r.Properties.Description).startsWith('Slipway worker '),
    );
    expect(workerFunctions).toHaveLength(workers.length);
  });

  it('lets the scheduler role send to the invocations queue (scheduled functions) and to no other queue', () => {
    const roleId = logicalId(stack.state.schedulerRole);
    const sqsStatements = statementsOfRoleIn(resources, roleId).filter((s) => [s.Action].flat().some((a) => String(a).startsWith('sqs:')));
    expect(sqsStatements).toHaveLength(1);
    expect([sqsStatements[0]!.Action].flat()).toContain('sqs:SendMessage');
    expect(sqsStatements[0]!.Resource).toEqual({ 'Fn::GetAtt': [logicalId(stack.state.queues.invocations), 'Arn'] });
    expect([...actionsOfRole(roleId)].filter((a) => !a.startsWith('sqs:'))).toEqual(['lambda:InvokeFunction']);
  });

  it('lets only EventBridge Scheduler of this account assume the scheduler role', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [
          Match.objectLike({
            Principal: { Service: 'scheduler.amazonaws.com' },
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
          }),
        ],
      },
    });
  });
});

describe('worker rows the table does not hold yet', () => {
  // The worker table grows as features land; the wiring of each trigger kind is checked on stand-in rows.
  const standIn = (rows: WorkerRow[]) => {
    const probe = new Stack(scratchApp({ context: withoutBundling }), 'WorkerProbe');
    const state = new SlipwayState(probe, 'State');
    const workersConstruct = new SlipwayWorkers(probe, 'Workers', {
      grants: { state, mailFrom: 'no-reply@example.test' },
      environment: {},
      environmentFor: () => ({}),
      rows,
    });
    return { probe, state, workersConstruct };
  };

  it('consumes a queue row through an event source mapping that reports batch item failures', () => {
    const { probe, state, workersConstruct } = standIn([
      {
        name: 'probe-consumer',
        handler: fallbackRoute.handler,
        trigger: { kind: 'queue', queue: 'sslRetries', batchSize: 5 },
        uses: ['table:read'],
        timeoutSeconds: 30,
      },
    ]);
    const probeTemplate = Template.fromStack(probe);
    const fn = workersConstruct.workerFunctions.get('probe-consumer')!;
    probeTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: probe.getLogicalId(fn.fn.node.defaultChild as CfnElement) },
      EventSourceArn: { 'Fn::GetAtt': [probe.getLogicalId(state.queues.sslRetries.node.defaultChild as CfnElement), 'Arn'] },
      BatchSize: 5,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('maps every resource use to IAM that cdk-nag accepts, and a scheduled row gets invoked by the scheduler role', () => {
    // builds:run is granted by the CodeBuild project itself, to the builds worker (the 'builds' section checks it).
    const everyUse = (Object.keys(allowedFor) as ResourceUse[]).filter((use) => use !== 'builds:run');
    const { probe, state, workersConstruct } = standIn([
      {
        name: 'probe-everything',
        handler: fallbackRoute.handler,
        trigger: { kind: 'schedule', targetArnEnvVar: 'PROBE_TARGET_ARN' },
        uses: everyUse,
      },
    ]);
    const report = new AwsSolutionsChecks().validateScope(probe);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
    const probeTemplate = Template.fromStack(probe);
    const fn = workersConstruct.workerFunctions.get('probe-everything')!;
    const roleId = probe.getLogicalId(fn.role.node.defaultChild as CfnElement);
    const granted = actionsOfRole(roleId, probeTemplate.toJSON().Resources);
    expect([...granted].sort()).toEqual([...new Set([...logWrites, ...everyUse.flatMap((use) => allowedFor[use])])].sort());
    probeTemplate.hasResourceProperties('AWS::Lambda::Function', { FunctionName: 'WorkerProbe-probe-everything' });
    probeTemplate.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: probe.getLogicalId(state.schedulerRole.node.defaultChild as CfnElement) }],
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'lambda:InvokeFunction' })]) },
    });
  });

  it('refuses a queue consumer whose timeout outlasts the queue visibility timeout', () => {
    expect(() =>
      standIn([
        {
          name: 'slow-consumer',
          handler: fallbackRoute.handler,
          trigger: { kind: 'queue', queue: 'sslRetries', batchSize: 1 },
          uses: [],
          timeoutSeconds: queueDefinitions.sslRetries.visibilityTimeoutSeconds + 1,
        },
      ]),
    ).toThrow(/exceeds the visibility timeout/);
  });
});

describe('state', () => {
  it('has one on-demand table with TTL, point-in-time recovery, deletion protection and the shared GSIs', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        DeletionProtectionEnabled: true,
        KeySchema: [
          { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((gsi) => ({
          IndexName: gsi.indexName,
          KeySchema: [
            { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
            { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      },
    });
  });

  it('blocks public access, encrypts and refuses plain HTTP on every bucket', () => {
    const buckets = ofType('AWS::S3::Bucket');
    // The data buckets of lib/resources.ts plus the server access log bucket and the console's files.
    expect(buckets).toHaveLength(Object.keys(bucketDefinitions).length + 2);
    for (const [id, bucket] of buckets) {
      expect(bucket.Properties.PublicAccessBlockConfiguration, id).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe(
        'AES256',
      );
      const policies = ofType('AWS::S3::BucketPolicy').filter(
        ([, p]) => JSON.stringify(p.Properties.Bucket) === JSON.stringify({ Ref: id }),
      );
      expect(policies, id).toHaveLength(1);
      expect(policies[0]![1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
    for (const bucket of Object.values(stack.state.buckets)) {
      expect(resources[logicalId(bucket)]!.Properties).toMatchObject({
        VersioningConfiguration: { Status: 'Enabled' },
        LoggingConfiguration: { DestinationBucketName: { Ref: logicalId(stack.state.accessLogsBucket) } },
      });
    }
  });

  it('expires what upload sessions leave in the bundles bucket, and nothing of the sites bucket', () => {
    const rules = (name: keyof typeof bucketDefinitions) =>
      resources[logicalId(stack.state.buckets[name])]!.Properties.LifecycleConfiguration.Rules as Record<string, unknown>[];
    expect(rules('bundles')).toContainEqual(expect.objectContaining({ Prefix: 'uploads/', ExpirationInDays: 9, Status: 'Enabled' }));
    // Queued invocations' request, result and console output: 7 days (spec Limits).
    expect(rules('bundles')).toContainEqual(
      expect.objectContaining({
        Prefix: 'invocations/',
        ExpirationInDays: 7,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        Status: 'Enabled',
      }),
    );
    expect(rules('sites').some((rule) => 'ExpirationInDays' in rule)).toBe(false);
  });

  it('gives every queue a dead-letter queue, encryption and TLS-only access', () => {
    for (const [name, definition] of Object.entries(queueDefinitions) as [
      keyof typeof queueDefinitions,
      (typeof queueDefinitions)[keyof typeof queueDefinitions],
    ][]) {
      const queue = resources[logicalId(stack.state.queues[name])]!;
      expect(queue.Properties).toMatchObject({
        VisibilityTimeout: definition.visibilityTimeoutSeconds,
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack.state.deadLetterQueues[name]), 'Arn'] },
          maxReceiveCount: definition.maxReceiveCount,
        },
      });
    }
    for (const [id] of ofType('AWS::SQS::Queue')) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
  });

  it('has the schedule group', () => {
    template.resourceCountIs('AWS::Scheduler::ScheduleGroup', 1);
  });

  it('gives every function the variables that name the resources', () => {
    const names = [
      tableDefinition.envVar,
      ...Object.values(bucketDefinitions).map((b) => b.envVar),
      ...Object.values(queueDefinitions).map((q) => q.envVar),
      scheduleGroupDefinition.envVar,
      scheduleGroupDefinition.roleEnvVar,
    ];
    for (const [id, fn] of platformFunctions()) {
      const variables = fn.Properties.Environment.Variables;
      for (const name of names) expect(variables[name], `${name} of ${id}`).toBeDefined();
      expect(variables, id).toMatchObject({
        SITE_DOMAIN: 'sites.example.test',
        FUNCTION_DOMAIN: 'fn.example.test',
        CORS_ORIGINS: corsOrigin,
        MAIL_FROM: 'no-reply@sites.example.test',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
  });
});

describe('least privilege', () => {
  it('gives a table:read-only route no write action on the table', () => {
    const readOnly = rows.filter((row) => row.uses.includes('table:read') && !row.uses.includes('table:write'));
    expect(readOnly.length).toBeGreaterThan(0);
    for (const row of readOnly) {
      const actions = actionsOfRole(logicalId(stack.api.routeFunctions.get(routeKey(row))!.role));
      expect(actions, routeKey(row)).toContain('dynamodb:GetItem');
      for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
        expect(actions, routeKey(row)).not.toContain(write);
      }
    }
  });

  it('grants each route and worker only what its row uses', () => {
    const all = [
      ...rows.map((row) => ({ name: routeKey(row), uses: row.uses, fn: stack.api.routeFunctions.get(routeKey(row))! })),
      { name: '$default', uses: fallbackRoute.uses, fn: stack.api.fallbackFunction },
      ...workers.map((row) => ({
        name: row.name,
        // A queue consumer also receives and deletes from its queue (granted by the event source).
        uses: row.uses,
        extra: [
          ...(row.trigger.kind === 'queue'
            ? ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes']
            : []),
          // The invocations worker runs each invocation as a Fargate task (test/infra/functions-queued-cloud.test.ts scopes these).
          // So does the warm pool's keeper, which starts and watches blank ones (the same statements).
          ...(row.name === 'function-invocations' || row.name === 'function-warm-tasks'
            ? ['ecs:RunTask', 'ecs:DescribeTasks', 'ecs:StopTask', 'iam:PassRole']
            : []),
          // The sweep lists and deletes user-function Lambdas (FunctionsRuntime.connectSweepWorker; scoped in its own test below).
          ...(row.name === 'cloud-sweep' ? ['lambda:ListFunctions', 'lambda:ListTags', 'lambda:DeleteFunction'] : []),
          // The prepare worker makes user-function Lambdas as the router does (FunctionsRuntime.connectPrepareWorker;
          // the same statements as the router's: test/infra/functions-runtime.test.ts).
          ...(row.name === 'function-lambdas'
            ? [
                'lambda:GetFunction',
                'lambda:CreateFunction',
                'lambda:TagResource',
                'lambda:GetLayerVersion',
                'ec2:DescribeSecurityGroups',
                'ec2:DescribeSubnets',
                'ec2:DescribeVpcs',
                'iam:PassRole',
              ]
            : []),
        ],
        fn: stack.workers.workerFunctions.get(row.name)!,
      })),
    ];
    for (const { name, uses, fn, ...rest } of all) {
      const allowed = new Set([...logWrites, ...uses.flatMap((use) => allowedFor[use]), ...((rest as { extra?: string[] }).extra ?? [])]);
      const granted = actionsOfRole(logicalId(fn.role));
      for (const action of granted) expect(allowed.has(action), `${name} holds ${action}`).toBe(true);
      for (const action of logWrites) expect(granted, name).toContain(action);
    }
  });

  it("lets the cloud sweep read the tags of and delete only the user functions' Lambdas, and tells it their prefix", () => {
    const sweep = stack.workers.workerFunctions.get('cloud-sweep')!;
    const statements = statementsOfRoleIn(resources, logicalId(sweep.role));
    const scoped = statements.filter((s) => [s.Action].flat().some((a) => a === 'lambda:DeleteFunction'));
    expect(scoped).toHaveLength(1);
    expect([scoped[0]!.Action].flat().sort()).toEqual(['lambda:DeleteFunction', 'lambda:ListTags']);
    expect(JSON.stringify(scoped[0]!.Resource)).toContain(`:function:${stack.functions.functionNamePrefix}*`);
    const env = resources[logicalId(sweep.fn)]!.Properties.Environment.Variables;
    expect(env.FUNCTIONS_LAMBDA_PREFIX).toBe(stack.functions.functionNamePrefix);
  });

  /**
   * Actions AWS offers no resource-level scoping for, which a VPC Lambda (its
   * network interfaces), the router creating such Lambdas, and a Fargate task
   * pulling its image cannot do without: only these may stand on Resource '*'.
   */
  const unscopableActions = new Set([
    // Creates a hosted zone, which has no ARN before it exists (managed-DNS domains).
    'route53:CreateHostedZone',
    // Requests a certificate, which has no ARN before it exists; lists the account's distributions (custom-domain TLS).
    'acm:RequestCertificate',
    'cloudfront:ListDistributions',
    // Creates the distribution of a custom domain: like the two above, an action IAM authorizes against "*" only.
    'cloudfront:CreateDistribution',
    // Lists the account's Lambdas (the cloud sweep; it deletes only those under the user functions' prefix).
    'lambda:ListFunctions',
    // Lists the account's queues by name prefix (the cloud sweep; it deletes only live tails' queues).
    'sqs:ListQueues',
    // The door instance's ECS agent finds its endpoint (no resource-level permissions).
    'ecs:DiscoverPollEndpoint',
    'ec2:CreateNetworkInterface',
    'ec2:DescribeNetworkInterfaces',
    'ec2:DescribeSubnets',
    'ec2:DeleteNetworkInterface',
    'ec2:AssignPrivateIpAddresses',
    'ec2:UnassignPrivateIpAddresses',
    'ec2:DescribeSecurityGroups',
    'ec2:DescribeVpcs',
    // A CodeBuild build in a VPC reads the VPC's DHCP options (CDK's VPC grant for a project).
    'ec2:DescribeDhcpOptions',
    'ecr:GetAuthorizationToken',
  ]);

  it('never grants a wildcard action, nor a wildcard resource beyond the actions AWS cannot scope', () => {
    for (const { id, statements } of policyDocuments(resources)) {
      if (isConsoleDeployer(id)) continue;
      // A denial narrows what a role may do, whatever its wildcards (the build role's NotAction deny list).
      for (const statement of statements.filter((st) => st.Effect !== 'Deny')) {
        const actions = [statement.Action].flat() as string[];
        for (const action of actions) expect(action, id).not.toMatch(/\*/);
        if ([statement.Resource].flat().includes('*')) {
          expect(
            actions.filter((action) => !unscopableActions.has(action)),
            id,
          ).toEqual([]);
        }
      }
    }
    // No function role carries an AWS managed policy (AWSLambdaBasicExecutionRole would allow every log group).
    for (const [id, role] of ofType('AWS::IAM::Role')) {
      if (!isConsoleDeployer(id)) expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
    }
  });
});

describe('secrets', () => {
  const secretNames = Object.keys(secretDefinitions) as SecretName[];
  /** Every function of the stack with the `uses` of its row. */
  const everyFunction = () => [
    ...rows.map((row) => ({
      name: routeKey(row),
      uses: row.uses as readonly ResourceUse[],
      fn: stack.api.routeFunctions.get(routeKey(row))!,
    })),
    { name: '$default', uses: fallbackRoute.uses, fn: stack.api.fallbackFunction },
    ...workers.map((row) => ({ name: row.name, uses: row.uses, fn: stack.workers.workerFunctions.get(row.name)! })),
  ];
  const statementsOfRole = (roleId: string) => statementsOfRoleIn(resources, roleId);

  it('creates one generated secret per definition; the encryption key outlives the stack and is 64 hex characters', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', secretNames.length);
    const gitState = resources[logicalId(stack.state.secrets.gitState)]!;
    expect(gitState.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    // The forge signing key's seed: generated, never in the template, long enough for lib/git/forge-keys.ts.
    const forgeSigning = resources[logicalId(stack.state.secrets.forgeSigning)]!;
    expect(forgeSigning.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 64, ExcludePunctuation: true });
    const envKey = resources[logicalId(stack.state.secrets.envEncryption)] as Resource & {
      DeletionPolicy?: string;
      UpdateReplacePolicy?: string;
    };
    expect(envKey.Type).toBe('AWS::SecretsManager::Secret');
    expect(envKey.Properties.GenerateSecretString).toEqual({
      PasswordLength: 64,
      ExcludeUppercase: true,
      ExcludePunctuation: true,
      IncludeSpace: false,
      ExcludeCharacters: 'ghijklmnopqrstuvwxyz',
    });
    expect(envKey.DeletionPolicy).toBe('Retain');
    expect(envKey.UpdateReplacePolicy).toBe('Retain');
  });

  it('lets only the functions whose row uses a secret read it, that secret only, and gives them its ARN', () => {
    const readers = new Map<SecretName, string[]>(secretNames.map((name) => [name, []]));
    for (const { name, uses, fn } of everyFunction()) {
      const statements = statementsOfRole(logicalId(fn.role)).filter((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue'));
      const variables = resources[logicalId(fn.fn)]!.Properties.Environment.Variables as Record<string, unknown>;
      const used = secretNames.filter((secret) => uses.includes(`secrets:${secret}`));
      const byRef = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
      expect(statements.flatMap((s) => [s.Resource].flat()).sort(byRef), name).toEqual(
        used.map((secret) => ({ Ref: logicalId(stack.state.secrets[secret]) })).sort(byRef),
      );
      for (const statement of statements) expect(statement.Action, name).toBe('secretsmanager:GetSecretValue');
      for (const secret of secretNames) {
        const { envVar, arnEnvVar } = secretDefinitions[secret];
        // The value never travels in the function configuration, only the ARN, and only to a reader.
        expect(variables[envVar], `${name} ${envVar}`).toBeUndefined();
        expect(variables[arnEnvVar], `${name} ${arnEnvVar}`).toEqual(
          used.includes(secret) ? { Ref: logicalId(stack.state.secrets[secret]) } : undefined,
        );
      }
      for (const secret of used) readers.get(secret)!.push(name);
    }
    // The Git connect state's key: only the connect route. The forge tokens' keys: the builds worker signs a token for a
    // fetch, the JWKS route publishes the public halves (issue 39: no longer a key derived from the Git state secret).
    expect(readers.get('gitState')!.sort()).toEqual(['GET /api/v1/auth/git-host/connect']);
    expect(readers.get('forgeSigning')!.sort()).toEqual(['GET /.well-known/jwks.json', 'builds']);
    // The same key seals a project's Git webhook secret and access token: the routes that set or check them read it.
    // It seals the functions' callback secret too: its two routes, and the callbacks worker that signs deliveries.
    expect(readers.get('envEncryption')!.sort()).toEqual([
      'GET /api/v1/projects/{id}/functions/callback-secret',
      'POST /api/v1/projects',
      'POST /api/v1/projects/{id}/env/bulk',
      'POST /api/v1/projects/{id}/functions/callback-secret/rotate',
      'POST /api/v1/projects/{id}/git/webhook-secret',
      'POST /api/v1/webhooks/git/github',
      'POST /api/v1/webhooks/git/gitlab',
      'PUT /api/v1/projects/{id}/env/{name}',
      'builds',
      'function-callbacks',
    ]);
    expect(readers.get('billingWebhook')).toEqual(['POST /api/v1/webhooks/billing']);
    // Listing names reveals no value: it neither decrypts nor holds the key.
    expect(findRouteUses('GET /api/v1/projects/{id}/env')).not.toContain('secrets:envEncryption');
    // No route or worker reads the sites origin header; of the other roles (site serving, custom resources) only the
    // serve-site function of methods other than GET and HEAD reads a secret: that one.
    expect(readers.get('siteOrigin')).toEqual([]);
    const functionRoles = new Set(everyFunction().map(({ fn }) => logicalId(fn.role)));
    const otherMethodsRole = logicalId(stack.sites.otherMethodsFunction.role);
    for (const { id, roles, statements } of policyDocuments(resources)) {
      if (roles.every((role) => functionRoles.has(role))) continue;
      const reads = statements.filter((statement) => [statement.Action].flat().includes('secretsmanager:GetSecretValue'));
      if (roles.length === 1 && roles[0] === otherMethodsRole)
        expect(reads.map((statement) => statement.Resource)).toEqual([{ Ref: logicalId(stack.state.secrets.siteOrigin) }]);
      else expect(reads, id).toEqual([]);
    }
  });

  it('passes the e-mail confirmation page to every function, defaulting to the dashboard under the site domain', () => {
    for (const [id, fn] of platformFunctions()) {
      expect(fn.Properties.Environment.Variables.EMAIL_CONFIRM_URL, id).toBe('https://app.sites.example.test/confirm-email');
    }
    // The stack passes what readSettings gives; a context value replaces the default, and a non-URL stops synthesis.
    const settingsWith = (context: Record<string, string>) => readSettings(scratchApp({ context }));
    expect(settingsWith({ emailConfirmUrl: 'https://dashboard.example.test/account/confirm' }).emailConfirmUrl).toBe(
      'https://dashboard.example.test/account/confirm',
    );
    expect(settingsWith({}).emailConfirmUrl).toBe('https://app.slipway.site/confirm-email');
    expect(() => settingsWith({ emailConfirmUrl: 'app.example.test/confirm' })).toThrow(
      'emailConfirmUrl: "app.example.test/confirm" is not an http(s) URL',
    );
  });

  it('passes the abuse intake switch and its hourly limits to every function, with their defaults', () => {
    for (const [id, fn] of platformFunctions()) {
      expect(fn.Properties.Environment.Variables, id).toMatchObject({
        ABUSE_INTAKE: 'on',
        ABUSE_REPORTS_PER_SUBMITTER_PER_HOUR: '10',
        ABUSE_REPORTS_PLATFORM_PER_HOUR: '500',
      });
    }
    const settingsWith = (context: Record<string, unknown>) => readSettings(scratchApp({ context }));
    expect(settingsWith({ abuseIntake: 'off', abuseReportsPerSubmitterPerHour: '3', abuseReportsPlatformPerHour: 50 })).toMatchObject({
      abuseIntake: 'off',
      abuseReportsPerSubmitterPerHour: 3,
      abuseReportsPlatformPerHour: 50,
    });
    expect(() => settingsWith({ abuseIntake: 'maybe' })).toThrow('abuseIntake: "maybe" is not on or off');
    expect(() => settingsWith({ abuseReportsPlatformPerHour: '0' })).toThrow(
      'abuseReportsPlatformPerHour: must be a whole number of at least 1',
    );
  });
});

const findRouteUses = (key: string) => rows.find((row) => routeKey(row) === key)!.uses as readonly ResourceUse[];

describe('the console', () => {
  it('serves the built dashboard from a private bucket and /api/* from the HTTP API on one CloudFront origin', () => {
    const consoles = ofType('AWS::CloudFront::Distribution').filter(([, d]) =>
      String(d.Properties.DistributionConfig.Comment).startsWith('Slipway console'),
    );
    expect(consoles).toHaveLength(1);
    const config = consoles[0]![1].Properties.DistributionConfig;
    expect(config.Comment).toBe('Slipway console: app.sites.example.test');
    expect(config.DefaultRootObject).toBe('index.html');
    const api = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/api/*');
    expect(api).toMatchObject({
      AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
      // Managed policies: CachingDisabled, and AllViewerExceptHostHeader (cookies, query and headers reach the API).
      CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
      OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
      ViewerProtocolPolicy: 'https-only',
    });
    const apiOrigin = config.Origins.find((o: { Id: string }) => o.Id === api.TargetOriginId);
    expect(JSON.stringify(apiOrigin.DomainName)).toContain(logicalId(stack.api.httpApi));
    expect(JSON.stringify(apiOrigin.DomainName)).toContain('execute-api');
    const s3Origin = config.Origins.find((o: { Id: string }) => o.Id === config.DefaultCacheBehavior.TargetOriginId);
    expect(s3Origin.OriginAccessControlId).toBeDefined();
    expect(config.DefaultCacheBehavior.FunctionAssociations).toHaveLength(1);
    // The forge tokens' JWKS on the console's origin (their iss), answered by the same API origin.
    const jwks = config.CacheBehaviors.find((b: { PathPattern: string }) => b.PathPattern === '/.well-known/jwks.json');
    expect(jwks).toMatchObject({ AllowedMethods: ['GET', 'HEAD'], TargetOriginId: api.TargetOriginId, ViewerProtocolPolicy: 'https-only' });
    // Its own response headers policy: the console's CSP (framing refused) and CloudFront's managed security headers.
    const policyRef = config.DefaultCacheBehavior.ResponseHeadersPolicyId as { Ref: string };
    const headers = resources[policyRef.Ref]!.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    expect(headers.ContentSecurityPolicy).toEqual({
      ContentSecurityPolicy: consoleContentSecurityPolicy(CLOUD_STORAGE_ORIGINS),
      Override: true,
    });
    expect(headers.ContentSecurityPolicy.ContentSecurityPolicy).toContain("frame-ancestors 'none'");
    expect(headers.FrameOptions).toEqual({ FrameOption: 'DENY', Override: true });
    expect(headers.StrictTransportSecurity).toMatchObject({ AccessControlMaxAgeSec: 31536000, Override: true });
    expect(headers.ContentTypeOptions).toEqual({ Override: true });
    template.resourceCountIs('Custom::CDKBucketDeployment', 1);
    // CDK's copying handler reaches S3 only in the CDK asset bucket and the console's own bucket, and CloudFront only to invalidate.
    const deployer = policyDocuments(resources).filter(({ id }) => isConsoleDeployer(id));
    expect(deployer.length).toBeGreaterThan(0);
    for (const statement of deployer.flatMap((d) => d.statements)) {
      const actions = [statement.Action].flat() as string[];
      const resourcesOf = JSON.stringify(statement.Resource);
      if (actions.every((a) => a.startsWith('s3:'))) {
        const inAssets = resourcesOf.includes('cdk-hnb659fds-assets');
        expect(inAssets || resourcesOf.includes(logicalId(stack.console.bucket)), resourcesOf).toBe(true);
      } else {
        expect(actions.sort()).toEqual(['cloudfront:CreateInvalidation', 'cloudfront:GetInvalidation']);
      }
    }
    for (const [id, fn] of platformFunctions()) {
      expect(fn.Properties.Environment.Variables.CONSOLE_URL, id).toBe('https://app.sites.example.test');
    }
  });
});

describe('builds', () => {
  it('runs builds in a CodeBuild project in the compute network, under a role denied every platform resource, started only by the builds worker', () => {
    const [projectId, project] = ofType('AWS::CodeBuild::Project')[0]!;
    expect(project.Properties.Environment).toMatchObject({ ComputeType: 'BUILD_GENERAL1_SMALL', PrivilegedMode: false });
    expect(JSON.stringify(project.Properties.VpcConfig.SecurityGroupIds)).toContain(logicalId(stack.functions.computeSecurityGroup));
    // The compute subnets only (their ACL denies private ranges), not the container door's, which are private too.
    const compute = stack.functions.vpc.selectSubnets(computeSubnets).subnets.map((subnet) => ({ Ref: logicalId(subnet) }));
    expect(compute).toHaveLength(2);
    expect(project.Properties.VpcConfig.Subnets).toEqual(compute);
    expect(project.Properties.Source.BuildSpec).toContain('node /slipway/build.mjs all');
    const roleId = (project.Properties.ServiceRole as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;
    const deny = policyDocuments(resources)
      .filter((p) => p.roles.includes(roleId))
      .flatMap((p) => p.statements)
      .find((statement) => statement.Sid === 'NoPlatformResources');
    expect(deny?.Effect).toBe('Deny');
    expect(JSON.stringify(deny?.Resource)).toContain(logicalId(stack.state.table));
    const worker = stack.workers.workerFunctions.get('builds')!;
    const statements = policyDocuments(resources)
      .filter((p) => p.roles.includes(logicalId(worker.role)))
      .flatMap((p) => p.statements);
    const codebuild = statements.filter((statement) => [statement.Action].flat().some((a) => String(a).startsWith('codebuild:')));
    expect(codebuild.map((statement) => statement.Resource)).toEqual([{ 'Fn::GetAtt': [projectId, 'Arn'] }]);
    expect(resources[logicalId(worker.fn)]!.Properties.Environment.Variables.BUILDS_CODEBUILD_PROJECT).toEqual({ Ref: projectId });
  });
});

describe('compliance', () => {
  it("stays under CloudFormation's 500 resources and 200 parameters per stack, every function role keeping its grants inline", () => {
    expect(Object.keys(template.toJSON().Resources).length).toBeLessThan(500);
    const nestedFiles = fs.readdirSync(outdir).filter((f) => f.endsWith('.nested.template.json'));
    // Operations (infra/operations.ts) and the API's routes (infra/api.ts).
    expect(nestedFiles).toHaveLength(2);
    for (const file of nestedFiles) {
      const nested = readTemplateFile(outdir, file);
      expect(Object.keys(nested.Resources ?? {}).length, file).toBeLessThan(500);
      expect(Object.keys(nested.Parameters ?? {}).length, file).toBeLessThan(200);
    }
    const functions = [...stack.api.routeFunctions.values(), stack.api.fallbackFunction, ...stack.workers.workerFunctions.values()];
    for (const fn of functions) {
      const roleId = logicalId(fn.role);
      expect(
        resources[roleId]!.Properties.Policies.map((p: { PolicyName: string }) => p.PolicyName),
        fn.node.path,
      ).toEqual(['Grants']);
      expect(
        policyDocuments(resources)
          .filter((p) => p.roles.includes(roleId))
          .map((p) => p.id),
        fn.node.path,
      ).toEqual([`${roleId}/Grants`]);
    }
  });

  it('passes cfn-lint with no finding, its nested stacks too (the operations stack with its alarm mail)', async () => {
    const { templates, ...result } = await cfnLint;
    expect(templates).toContain(path.basename(templateFile));
    expect(templates.filter((f) => /^Slipway(Api|Operations).*\.nested\.template\.json$/.test(f))).toHaveLength(2);
    expect(typeof result.code).toBe('number');
    const findings = JSON.parse(result.stdout || '[]') as { Rule: { Id: string }; Level: string; Message: string }[];
    expect(findings.filter((f) => f.Level === 'Error')).toEqual([]);
    // No warning or informational finding either.
    expect(findings.map((f) => `${f.Rule.Id} ${f.Message}`)).toEqual([]);
    expect(result.code).toBe(0);
  }, 120_000);

  it('has no unacknowledged cdk-nag AwsSolutions finding', () => {
    const report = new AwsSolutionsChecks().validateScope(stack);
    expect(report.violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('would report a finding the stack does not acknowledge (the check is live)', () => {
    const probe = new Stack(scratchApp(), 'Probe');
    new s3.Bucket(probe, 'Open', { enforceSSL: false });
    const report = new AwsSolutionsChecks().validateScope(probe);
    expect(report.violations.map((v) => v.ruleName)).toEqual(expect.arrayContaining(['AwsSolutions-S1', 'AwsSolutions-S10']));
  });

  it('gives every acknowledged cdk-nag finding a written reason', () => {
    const acknowledgements = stack.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === 'aws:cdk:acknowledged-rules').map((m) => m.data as Record<string, string>));
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const entry of acknowledgements) {
      for (const [id, reason] of Object.entries(entry)) expect(reason.length, id).toBeGreaterThan(40);
    }
  });
});
