import { ArnFormat, Stack, Token, Validations, type CfnResource } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type { ResourceUse } from '../lib/http/routes.ts';
import type { QueueName, SecretName } from '../lib/resources.ts';
import type { SlipwayState } from './state.ts';

/**
 * Item operations only: no Scan (the design forbids table scans on request
 * paths) and no DescribeTable. Transactions are authorized per item, so
 * TransactGet/TransactWrite need nothing beyond these.
 */
export const tableReadActions = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'] as const;
export const tableWriteActions = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  // Transactions that assert another item (uniqueness, counters) without writing it.
  'dynamodb:ConditionCheckItem',
] as const;

export const bucketReadActions = ['s3:GetObject'] as const;
export const bucketWriteActions = ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'] as const;

/** What EventBridge Scheduler work needs: the schedules of our group, nothing else. */
export const scheduleWriteActions = [
  'scheduler:CreateSchedule',
  'scheduler:UpdateSchedule',
  'scheduler:DeleteSchedule',
  'scheduler:GetSchedule',
] as const;

/** Name prefix of live tails' queues (FUNCTIONS_TAIL_QUEUE_PREFIX): short enough for SQS's 80 characters with a UUID. */
export function tailQueuePrefix(stack: Stack): string {
  return `${stack.stackName.slice(0, 36)}-tail-`;
}

export interface GrantContext {
  state: SlipwayState;
  /** The platform's sender address; `mail:send` may send from it (or its domain) only. */
  mailFrom: string;
}

/** What a grant is made with: the role, a statement adder, the stack and the context. */
interface Granting extends GrantContext {
  role: iam.Role;
  allow: (actions: readonly string[], resources: string[]) => iam.AddToPrincipalPolicyResult;
  stack: Stack;
}

/** A use that reads one secret of lib/resources.ts. */
const isSecretUse = (use: ResourceUse): use is `secrets:${SecretName}` => use.startsWith('secrets:');
type PlainUse = Exclude<ResourceUse, `secrets:${SecretName}`>;

/**
 * The one mapping from a row's `uses` to IAM: a function's role gets exactly
 * the grants its row declares, and a use the stack does not know fails to
 * compile (the table below names every use). Where a statement must name a
 * family of resources (`bucket/*`, the group's schedules), the cdk-nag finding
 * is acknowledged here, next to the grant that causes it.
 */
export function grantUses(role: iam.Role, uses: readonly ResourceUse[], { state, mailFrom }: GrantContext): void {
  const allow = (actions: readonly string[], resources: string[]) =>
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...actions], resources }));
  const granting: Granting = { role, allow, stack: Stack.of(state), state, mailFrom };
  for (const use of new Set(uses)) {
    if (isSecretUse(use)) {
      // The value only: no DescribeSecret or ListSecrets, and no other secret of the account.
      allow(['secretsmanager:GetSecretValue'], [state.secrets[use.slice('secrets:'.length) as SecretName].secretArn]);
      continue;
    }
    const grant = useGrants[use] as ((granting: Granting, use: PlainUse) => void) | undefined;
    if (!grant) throw new Error(`No IAM mapping for resource use ${String(use)}`);
    grant(granting, use);
  }
}

const sendMessages = ({ state, role }: Granting, use: `${QueueName}:send`) =>
  state.queues[use.slice(0, -':send'.length) as QueueName].grantSendMessages(role);

/** Every use but a secret's, and what it grants: a key missing here fails to compile. */
const useGrants: { [Use in PlainUse]: (granting: Granting, use: Use) => void } = {
  'table:read': ({ allow, state }) =>
    allow(tableReadActions, [state.table.tableArn, ...state.tableIndexNames.map((name) => `${state.table.tableArn}/index/${name}`)]),
  // Writes address the base table; an index is never written directly.
  'table:write': ({ allow, state }) => allow(tableWriteActions, [state.table.tableArn]),
  // Counters of site analytics only: items whose partition key is ANALYTICS#{project_id}.
  'table:analytics': ({ role, state }) =>
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:UpdateItem'],
        resources: [state.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['ANALYTICS#*'] } },
      }),
    ),
  'sites:read': (granting) => grantBucket(granting, granting.state.buckets.sites, bucketReadActions),
  'sites:write': (granting) => grantBucket(granting, granting.state.buckets.sites, bucketWriteActions),
  'bundles:read': (granting) => grantBucket(granting, granting.state.buckets.bundles, bucketReadActions),
  'bundles:write': (granting) => grantBucket(granting, granting.state.buckets.bundles, bucketWriteActions),
  'invocations:send': sendMessages,
  'sslRetries:send': sendMessages,
  'deletions:send': sendMessages,
  'screenshots:send': sendMessages,
  'abuseScans:send': sendMessages,
  'geoFilters:send': sendMessages,
  'builds:send': sendMessages,
  'functionLambdas:send': sendMessages,
  'callbacks:send': sendMessages,
  'tails:watch': grantTailQueues,
  'tails:send': grantTailQueues,
  'tails:sweep': grantTailQueues,
  // The CodeBuild project is made beside the workers (infra/builds.ts), which grants its own actions to the worker.
  'builds:run': () => {},
  'cdn:distributions': grantCdnDistributions,
  'cdn:sweep': grantCdnSweep,
  'scheduler:write': grantScheduleWrites,
  'mail:send': grantMailSend,
  'dns:zones': grantDnsZones,
  'tls:provision': grantTlsProvision,
};

function grantBucket({ allow, role }: Granting, bucket: s3.Bucket, actions: readonly string[]): void {
  allow(actions, [bucket.arnForObjects('*')]);
  // ListBucket turns a HeadObject/GetObject of a missing key into 404 instead of 403.
  allow(['s3:ListBucket'], [bucket.bucketArn]);
  acknowledge(
    role,
    `AwsSolutions-IAM5[Resource::<${logicalId(bucket)}.Arn>/*]`,
    'Object keys are chosen per team, project and deployment at run time, so the grant covers the objects of this one bucket.',
  );
}

/** Live tails' queues, made per watcher at run time (lib/functions/tail.ts): the grant names their prefix. */
function grantTailQueues({ allow, role, stack }: Granting, use: 'tails:watch' | 'tails:send' | 'tails:sweep'): void {
  const actions = {
    'tails:send': ['sqs:SendMessage'],
    // A queue is tagged with its function as it is made (the sweep finds its session by it): CreateQueue with tags
    // takes TagQueue too.
    'tails:watch': ['sqs:CreateQueue', 'sqs:TagQueue', 'sqs:DeleteQueue', 'sqs:ReceiveMessage', 'sqs:DeleteMessage'],
    'tails:sweep': ['sqs:ListQueueTags', 'sqs:GetQueueAttributes', 'sqs:DeleteQueue'],
  }[use];
  allow(actions, [stack.formatArn({ service: 'sqs', resource: `${tailQueuePrefix(stack)}*`, arnFormat: ArnFormat.NO_RESOURCE_NAME })]);
  acknowledge(
    role,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${tailQueuePrefix(stack)}*]`,
    "Each live tail makes a queue of its own while it is open; the grant covers the stack's tail queues only.",
  );
  if (use !== 'tails:sweep') return;
  // ListQueues accepts no resource restriction (the sweep lists by the tails' name prefix); what it deletes is tail queues only.
  allow(['sqs:ListQueues'], ['*']);
  acknowledge(role, 'AwsSolutions-IAM5[Resource::*]', 'sqs:ListQueues accepts no resource restriction; the sweep lists by name prefix.');
}

/** The configuration of existing distributions (domains' own), read and updated only. */
function grantCdnDistributions({ role, allow, stack }: Granting): void {
  // The configuration of existing distributions only: no creation, deletion or invalidation.
  allow(
    ['cloudfront:GetDistributionConfig', 'cloudfront:UpdateDistribution'],
    [
      stack.formatArn({
        service: 'cloudfront',
        region: '',
        resource: 'distribution',
        resourceName: '*',
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      }),
    ],
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:cloudfront::<AWS::AccountId>:distribution/*]',
    "Each verified domain gets its own distribution at run time; the grant covers the account's distributions and only reads and updates their configuration.",
  );
}

/** The distribution sweep: list, read tags, update and delete distributions. */
function grantCdnSweep({ role, allow, stack }: Granting): void {
  // ListDistributions accepts no resource restriction; what the sweep changes is distributions only.
  allow(['cloudfront:ListDistributions'], ['*']);
  const distributions = stack.formatArn({
    service: 'cloudfront',
    region: '',
    resource: 'distribution',
    resourceName: '*',
    arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
  });
  allow(
    [
      'cloudfront:ListTagsForResource',
      'cloudfront:GetDistribution',
      'cloudfront:GetDistributionConfig',
      'cloudfront:UpdateDistribution',
      'cloudfront:DeleteDistribution',
    ],
    [distributions],
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'CloudFront ListDistributions accepts no resource-level restriction: listing is account-wide.',
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:cloudfront::<AWS::AccountId>:distribution/*]',
    "Domains' distributions are made at run time; the sweep reads their tags and takes down only those " +
      'tagged for a domain that no longer names them.',
  );
}

/** Schedules of the platform's group, and passing the role Scheduler assumes. */
function grantScheduleWrites({ role, allow, stack, state }: Granting): void {
  const groupName = state.scheduleGroup.scheduleGroupName;
  allow(scheduleWriteActions, [
    stack.formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${groupName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    }),
  ]);
  acknowledge(
    role,
    `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${Token.isUnresolved(groupName) ? `<${logicalId(state.scheduleGroup)}>` : groupName}/*]`,
    "Schedule names are made per project at run time; the grant is limited to the schedules of the platform's own group.",
  );
  // A schedule names the role Scheduler assumes; passing any other role would escalate.
  state.schedulerRole.grantPassRole(role);
}

/** SES sending from the platform's address (or its domain). */
function grantMailSend({ allow, stack, mailFrom }: Granting): void {
  const domain = mailFrom.slice(mailFrom.indexOf('@') + 1);
  // SES authorizes against the identity that covers the sender: the address, or its verified domain.
  allow(
    ['ses:SendEmail'],
    [mailFrom, domain].map((identity) =>
      stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity, arnFormat: ArnFormat.SLASH_RESOURCE_NAME }),
    ),
  );
}

/** Managed zones: create, and delete after emptying them. */
function grantDnsZones({ role, allow, stack }: Granting): void {
  // CreateHostedZone names no resource (the zone does not exist yet); deletion is limited to hosted zones.
  allow(['route53:CreateHostedZone'], ['*']);
  // Deleting a zone first removes the records TLS wrote in it (Route 53 deletes only an empty zone).
  allow(
    ['route53:DeleteHostedZone', 'route53:GetHostedZone', 'route53:ListResourceRecordSets', 'route53:ChangeResourceRecordSets'],
    [`arn:${stack.partition}:route53:::hostedzone/*`],
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'Route 53 CreateHostedZone accepts no resource-level restriction: the zone it makes has no ARN yet.',
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:route53:::hostedzone/*]',
    'Managed zones are created per domain at run time; the grant covers hosted zones only.',
  );
}

/** TLS for custom domains (lib/domains/tls.ts): certificates, distributions, the records and the retry queue. */
function grantTlsProvision({ role, allow, stack, state }: Granting): void {
  // lib/domains/tls.ts. Certificates for CloudFront live in us-east-1; distributions and hosted zones are global.
  // CreateDistribution has no resource type in IAM (the distribution has no ARN yet): only "*" allows it.
  allow(['acm:RequestCertificate', 'cloudfront:ListDistributions', 'cloudfront:CreateDistribution'], ['*']);
  allow(
    ['acm:AddTagsToCertificate', 'acm:DescribeCertificate', 'acm:DeleteCertificate'],
    [`arn:${stack.partition}:acm:us-east-1:${stack.account}:certificate/*`],
  );
  // Read and update; disable, then delete, the distribution of a removed domain.
  allow(
    [
      // CreateDistributionWithTags also needs TagResource: the distribution is tagged with its domain as it is made (the sweep reads it).
      'cloudfront:TagResource',
      'cloudfront:GetDistribution',
      'cloudfront:GetDistributionConfig',
      'cloudfront:UpdateDistribution',
      'cloudfront:DeleteDistribution',
    ],
    [`arn:${stack.partition}:cloudfront::${stack.account}:distribution/*`],
  );
  allow(['route53:ChangeResourceRecordSets'], [`arn:${stack.partition}:route53:::hostedzone/*`]);
  // Retries are new messages on the queue; after the last attempt the message goes to the queue's dead-letter queue,
  // whose URL the function reads from the queue's redrive policy.
  state.queues.sslRetries.grantSendMessages(role);
  allow(['sqs:GetQueueAttributes'], [state.queues.sslRetries.queueArn]);
  allow(['sqs:SendMessage', 'sqs:GetQueueUrl'], [state.deadLetterQueues.sslRetries.queueArn]);
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::*]',
    'ACM RequestCertificate, CloudFront CreateDistribution and ListDistributions accept no resource-level restriction: the certificate and distribution do not exist yet, and listing is account-wide.',
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:acm:us-east-1:<AWS::AccountId>:certificate/*]',
    'Certificates are requested per custom domain at run time; the grant covers ACM certificates only.',
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:cloudfront::<AWS::AccountId>:distribution/*]',
    'Each custom domain gets its own distribution at run time; the grant covers distributions only.',
  );
  acknowledge(
    role,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:route53:::hostedzone/*]',
    'Managed zones are created per domain at run time; the grant covers hosted zones only.',
  );
}

function logicalId(construct: { node: { defaultChild?: unknown } }): string {
  const resource = construct.node.defaultChild as CfnResource;
  return Stack.of(resource).getLogicalId(resource);
}

/** Acknowledges one cdk-nag finding on the role's policy, once per role. */
export function acknowledge(scope: iam.Role, id: string, reason: string): void {
  const seen = acknowledged.get(scope) ?? new Set<string>();
  if (seen.has(id)) return;
  seen.add(id);
  acknowledged.set(scope, seen);
  Validations.of(scope).acknowledge({ id, reason });
}
const acknowledged = new WeakMap<iam.Role, Set<string>>();
