import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';

/**
 * Operator command `admin backfill-deployments-index`: gives each deployment
 * made before the project's deployments index existed its index keys, so the
 * listing (GET /api/v1/projects/{id}/deployments) shows it. It scans the
 * table, which is why it is an operator command and never on a request path;
 * each write is conditional on the keys still missing, so a second run or a
 * racing one changes nothing.
 */
export async function backfillDeploymentsIndex(): Promise<{ indexed: number }> {
  let indexed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo().send(
      new ScanCommand({
        TableName: config.tableName(),
        FilterExpression: '#type = :deployment AND attribute_not_exists(gsi1pk)',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':deployment': 'deployment' },
        ExclusiveStartKey: start,
      }),
    );
    start = page.LastEvaluatedKey;
    for (const item of page.Items ?? []) {
      const index = keys.deploymentByProject(item.project_id as string, item.created_at as string, item.id as string);
      try {
        await dynamo().send(
          new UpdateCommand({
            TableName: config.tableName(),
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET gsi1pk = :pk, gsi1sk = :sk',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(gsi1pk)',
            ExpressionAttributeValues: { ':pk': index.gsi1pk, ':sk': index.gsi1sk },
          }),
        );
        indexed++;
      } catch (error) {
        if (!isConditionalCheckFailure(error)) throw error;
      }
    }
  } while (start);
  return { indexed };
}
