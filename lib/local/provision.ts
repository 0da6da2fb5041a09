import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateScheduleCommand, CreateScheduleGroupCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateEmailIdentityCommand, SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '../config.ts';
import { bucketDefinitions, queueDefinitions, scheduleGroupDefinition, tableDefinition } from '../resources.ts';
import { rateExpression, workers } from '../workers.ts';
import { localWorkerArn } from './scheduler-driver.ts';

export interface ProvisionOptions {
  endpoint: string;
  region: string;
  /** Prefix of every physical name, so several platforms share one endpoint. */
  prefix: string;
}

/**
 * Creates every resource of lib/resources.ts on the local endpoint and
 * returns the environment variables that name them, the same variables the
 * CDK stack gives deployed Lambdas.
 */
export async function provisionResources({ endpoint, region, prefix }: ProvisionOptions): Promise<Record<string, string>> {
  // Live tails make a queue each while open (lib/functions/tail.ts), named under this prefix.
  const env: Record<string, string> = { FUNCTIONS_TAIL_QUEUE_PREFIX: `${prefix}-tail-` };
  const clientOpts = { endpoint, region };
  await provisionTable(clientOpts, prefix, env);
  await provisionBuckets(clientOpts, prefix, env);
  await provisionQueues(clientOpts, prefix, env);
  await provisionSchedules(clientOpts, prefix, env);
  await provisionMailSender(clientOpts);
  return env;
}

interface ClientOptions {
  endpoint: string;
  region: string;
}

async function provisionTable(clientOpts: ClientOptions, prefix: string, env: Record<string, string>): Promise<void> {
  const dynamodb = new DynamoDBClient(clientOpts);
  const tableName = `${prefix}-table`;
  const attributes = new Set<string>([tableDefinition.partitionKey, tableDefinition.sortKey]);
  for (const gsi of tableDefinition.globalSecondaryIndexes) {
    attributes.add(gsi.partitionKey);
    attributes.add(gsi.sortKey);
  }
  try {
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
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
      }),
    );
    await waitUntilTableExists({ client: dynamodb, maxWaitTime: 30 }, { TableName: tableName });
    await dynamodb.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  env[tableDefinition.envVar] = tableName;
  dynamodb.destroy();
}

async function provisionBuckets(clientOpts: ClientOptions, prefix: string, env: Record<string, string>): Promise<void> {
  const s3 = new S3Client({ ...clientOpts, forcePathStyle: true });
  for (const bucket of Object.values(bucketDefinitions)) {
    const name = `${prefix}-${bucket.id}`.toLowerCase();
    try {
      await s3.send(new CreateBucketCommand({ Bucket: name }));
    } catch (error) {
      if ((error as Error).name !== 'BucketAlreadyOwnedByYou') throw error;
    }
    env[bucket.envVar] = name;
  }
  s3.destroy();
}

async function provisionQueues(clientOpts: ClientOptions, prefix: string, env: Record<string, string>): Promise<void> {
  const sqs = new SQSClient(clientOpts);
  for (const queue of Object.values(queueDefinitions)) {
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-${queue.id}-dlq` }));
    const dlqArn = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl!, AttributeNames: ['QueueArn'] }));
    const created = await sqs.send(
      new CreateQueueCommand({
        QueueName: `${prefix}-${queue.id}`,
        Attributes: {
          VisibilityTimeout: String(queue.visibilityTimeoutSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn.Attributes!.QueueArn,
            maxReceiveCount: queue.maxReceiveCount,
          }),
        },
      }),
    );
    env[queue.envVar] = created.QueueUrl!;
  }
  sqs.destroy();
}

async function provisionSchedules(clientOpts: ClientOptions, prefix: string, env: Record<string, string>): Promise<void> {
  const scheduler = new SchedulerClient(clientOpts);
  const groupName = `${prefix}-schedules`;
  try {
    await scheduler.send(new CreateScheduleGroupCommand({ Name: groupName }));
  } catch (error) {
    if ((error as Error).name !== 'ConflictException') throw error;
  }
  env[scheduleGroupDefinition.envVar] = groupName;
  env[scheduleGroupDefinition.roleEnvVar] = `arn:aws:iam::123456789012:role/${prefix}-scheduler`;
  // The recurring schedules of `rate` rows, as the stack makes them; the scheduler driver fires them.
  for (const row of workers) {
    if (row.trigger.kind !== 'rate') continue;
    try {
      await scheduler.send(
        new CreateScheduleCommand({
          Name: row.name,
          GroupName: groupName,
          ScheduleExpression: rateExpression(row.trigger),
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: { Arn: localWorkerArn(row.name), RoleArn: env[scheduleGroupDefinition.roleEnvVar], Input: '{}' },
        }),
      );
    } catch (error) {
      if ((error as Error).name !== 'ConflictException') throw error;
    }
  }
  scheduler.destroy();
}

/** SES sends only from a verified identity: the platform's sender address. */
async function provisionMailSender(clientOpts: ClientOptions): Promise<void> {
  const sesv2 = new SESv2Client(clientOpts);
  try {
    await sesv2.send(new CreateEmailIdentityCommand({ EmailIdentity: config.mailFrom() }));
  } catch (error) {
    if ((error as Error).name !== 'AlreadyExistsException') throw error;
  }
  sesv2.destroy();
}
