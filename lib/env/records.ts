import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { encryptEnvValue } from './encryption.ts';
import type { EnvEnvironment, EnvTarget } from './variables.ts';
import { queryAll } from '../db/query.ts';
import type { Stored } from '../db/item.ts';

/** An environment variable as the API shows it: never its value. */
export interface EnvVariableRecord {
  name: string;
  environment: EnvEnvironment;
  targets: EnvTarget[];
  created_at: string;
  updated_at: string;
}

/** A variable's item, as upsertEnvVariable writes it: the record, its sealed value and its project. */
export type EnvVariableItem = Stored<EnvVariableRecord & { value_sealed: string; project_id: string }>;

/** Parallel writes of one import: enough to finish 500 variables well inside the Lambda timeout. */
const WRITE_CONCURRENCY = 8;

/**
 * Creates or replaces one variable in a single UpdateItem
 * whose old image says which it was: two racing writers of the same name get
 * one `created` and one `updated`, never two `created`.
 */
export async function upsertEnvVariable(input: {
  projectId: string;
  teamId: string;
  environment: EnvEnvironment;
  name: string;
  value: string;
  targets: readonly EnvTarget[];
  updatedBy: string;
  now: string;
}): Promise<{ created: boolean; record: EnvVariableRecord }> {
  const sealed = encryptEnvValue(input.value, { projectId: input.projectId, environment: input.environment, name: input.name });
  const result = await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.envVariable(input.projectId, input.environment, input.name),
      UpdateExpression:
        'SET #name = :name, environment = :environment, targets = :targets, value_sealed = :sealed, project_id = :project, ' +
        'team_id = :team, updated_at = :now, updated_by = :by, created_at = if_not_exists(created_at, :now)',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: {
        ':name': input.name,
        ':environment': input.environment,
        ':targets': [...input.targets],
        ':sealed': sealed,
        ':project': input.projectId,
        ':team': input.teamId,
        ':now': input.now,
        ':by': input.updatedBy,
      },
      ReturnValues: 'ALL_OLD',
    }),
  );
  const createdAt = (result.Attributes?.created_at as string | undefined) ?? input.now;
  return {
    created: result.Attributes === undefined,
    record: { name: input.name, environment: input.environment, targets: [...input.targets], created_at: createdAt, updated_at: input.now },
  };
}

export async function upsertEnvVariables(
  common: Omit<Parameters<typeof upsertEnvVariable>[0], 'name' | 'value'>,
  variables: { name: string; value: string }[],
): Promise<{ created: string[]; updated: string[] }> {
  const limit = pLimit(WRITE_CONCURRENCY);
  const results = await Promise.all(variables.map((v) => limit(() => upsertEnvVariable({ ...common, ...v }))));
  return {
    created: results.filter((r) => r.created).map((r) => r.record.name),
    updated: results.filter((r) => !r.created).map((r) => r.record.name),
  };
}

/** Names and metadata of a project's variables, optionally of one environment; values stay sealed in the table. */
export async function listEnvVariables(projectId: string, environment?: EnvEnvironment): Promise<EnvVariableRecord[]> {
  const { pk, skPrefix } = keys.envVariablePrefix(projectId, environment);
  return (await queryAll({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ExpressionAttributeNames: { '#name': 'name' },
    ProjectionExpression: '#name, environment, targets, created_at, updated_at',
  })) as unknown as EnvVariableRecord[];
}
