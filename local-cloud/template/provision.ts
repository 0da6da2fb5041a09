import { randomInt } from 'node:crypto';
import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateSecretCommand, DescribeSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { resolveString, resolveValue, type LocalStackValues, type PhysicalResource } from './intrinsics.ts';
import { resourcesOfType, type SynthesizedTemplate, type TemplateResource } from './template.ts';

export interface TemplateProvisionOptions {
  endpoint: string;
  region: string;
  accountId: string;
  /** Prefix of every physical name, so several platforms share one endpoint. */
  prefix: string;
}

/**
 * A value for a secret of the template, made as GenerateSecretString would
 * make it (length, excluded characters and classes).
 */
export function generateSecretValue(spec: Record<string, any> | undefined): string {
  let alphabet = '';
  if (!spec?.ExcludeLowercase) alphabet += 'abcdefghijklmnopqrstuvwxyz';
  if (!spec?.ExcludeUppercase) alphabet += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  if (!spec?.ExcludeNumbers) alphabet += '0123456789';
  if (!spec?.ExcludePunctuation) alphabet += '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
  if (spec?.IncludeSpace) alphabet += ' ';
  const excluded = new Set(String(spec?.ExcludeCharacters ?? ''));
  const chars = [...alphabet].filter((c) => !excluded.has(c));
  const length = Number(spec?.PasswordLength ?? 32);
  return Array.from({ length }, () => chars[randomInt(chars.length)]).join('');
}

const ignore = (names: string[]) => (error: unknown) => {
  if (!names.includes((error as Error).name)) throw error;
};

async function createTable(
  client: DynamoDBClient,
  name: string,
  props: Record<string, any>,
  values: TemplateProvisionOptions,
): Promise<PhysicalResource> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: props.AttributeDefinitions,
        KeySchema: props.KeySchema,
        GlobalSecondaryIndexes: props.GlobalSecondaryIndexes,
      }),
    );
    await waitUntilTableExists({ client, maxWaitTime: 30 }, { TableName: name });
    if (props.TimeToLiveSpecification?.Enabled) {
      await client.send(new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: props.TimeToLiveSpecification }));
    }
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  return { ref: name, attributes: { Arn: `arn:aws:dynamodb:${values.region}:${values.accountId}:table/${name}` } };
}

/** Queues without a redrive policy first: a queue's policy names its dead-letter queue's ARN. */
function queuesInOrder(template: SynthesizedTemplate): [string, TemplateResource][] {
  const queues = resourcesOfType(template, 'AWS::SQS::Queue');
  return [...queues.filter(([, q]) => !q.Properties?.RedrivePolicy), ...queues.filter(([, q]) => q.Properties?.RedrivePolicy)];
}

/**
 * Creates the template's stateful resources (table, buckets, queues with
 * their visibility timeouts and redrive policies, the schedule group, the
 * secrets with values made per their GenerateSecretString) on the local
 * endpoint, and returns what each logical id is there.
 */
export async function provisionTemplate(
  template: SynthesizedTemplate,
  options: TemplateProvisionOptions,
): Promise<{ physical: Map<string, PhysicalResource>; renames: Map<string, string> }> {
  const { endpoint, region, accountId, prefix } = options;
  const made = new Map<string, PhysicalResource>();
  // Names the template fixes (a schedule group's Name) get the platform's prefix too, so that platforms sharing
  // an endpoint never share a resource; every string of the template naming it is rewritten the same way.
  const renames = new Map<string, string>();
  const values = (): LocalStackValues => ({ accountId, region, stackName: template.stackName, physical: made });
  const clientOpts = { endpoint, region };
  const dynamodb = new DynamoDBClient(clientOpts);
  const s3 = new S3Client({ ...clientOpts, forcePathStyle: true });
  const sqs = new SQSClient(clientOpts);
  const scheduler = new SchedulerClient(clientOpts);
  const secrets = new SecretsManagerClient(clientOpts);
  try {
    for (const [id, table] of resourcesOfType(template, 'AWS::DynamoDB::Table')) {
      made.set(id, await createTable(dynamodb, `${prefix}-${id}`, table.Properties ?? {}, options));
    }
    for (const [id] of resourcesOfType(template, 'AWS::S3::Bucket')) {
      const name = `${prefix}-${id}`.toLowerCase().slice(0, 63);
      await s3.send(new CreateBucketCommand({ Bucket: name })).catch(ignore(['BucketAlreadyOwnedByYou']));
      made.set(id, { ref: name, attributes: { Arn: `arn:aws:s3:::${name}`, DomainName: `${name}.s3.amazonaws.com` } });
    }
    for (const [id, queue] of queuesInOrder(template)) {
      const props = queue.Properties ?? {};
      const attributes: Record<string, string> = {};
      if (props.VisibilityTimeout !== undefined) attributes.VisibilityTimeout = String(props.VisibilityTimeout);
      if (props.MessageRetentionPeriod !== undefined) attributes.MessageRetentionPeriod = String(props.MessageRetentionPeriod);
      if (props.RedrivePolicy) attributes.RedrivePolicy = JSON.stringify(resolveValue(props.RedrivePolicy, values()));
      const name = `${prefix}-${id}`.slice(0, 80);
      const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      const arn = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: created.QueueUrl!, AttributeNames: ['QueueArn'] }));
      made.set(id, {
        ref: created.QueueUrl!,
        attributes: { Arn: arn.Attributes!.QueueArn!, QueueName: name, QueueUrl: created.QueueUrl! },
      });
    }
    for (const [id, group] of resourcesOfType(template, 'AWS::Scheduler::ScheduleGroup')) {
      const fixed = typeof group.Properties?.Name === 'string' ? group.Properties.Name : null;
      const name = `${prefix}-${fixed ?? id}`.slice(0, 64);
      if (fixed) renames.set(fixed, name);
      await scheduler.send(new CreateScheduleGroupCommand({ Name: name })).catch(ignore(['ConflictException']));
      made.set(id, { ref: name, attributes: { Arn: `arn:aws:scheduler:${region}:${accountId}:schedule-group/${name}` } });
    }
    for (const [id, secret] of resourcesOfType(template, 'AWS::SecretsManager::Secret')) {
      const name = `${prefix}-${id}`;
      const created = await secrets
        .send(new CreateSecretCommand({ Name: name, SecretString: generateSecretValue(secret.Properties?.GenerateSecretString) }))
        .catch(async (error: unknown) => {
          if ((error as Error).name !== 'ResourceExistsException') throw error;
          return secrets.send(new DescribeSecretCommand({ SecretId: name }));
        });
      made.set(id, { ref: created.ARN!, attributes: { Id: created.ARN! } });
    }
    for (const [id, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      const name = fn.Properties?.FunctionName
        ? resolveString(fn.Properties.FunctionName, values())
        : `${template.stackName}-${id}`.slice(0, 64);
      made.set(id, { ref: name, attributes: { Arn: `arn:aws:lambda:${region}:${accountId}:function:${name}` } });
    }
    return { physical: made, renames };
  } finally {
    for (const client of [dynamodb, s3, sqs, scheduler, secrets]) client.destroy();
  }
}
