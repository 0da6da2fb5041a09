import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';

/**
 * The project an environment variable request addresses: only what
 * authorization needs. Reads the Project item by the Sites data contract's
 * key (pk `PROJECT#<id>`, sk `PROJECT`).
 */
export interface EnvProject {
  id: string;
  team_id: string;
}

export async function loadEnvProject(projectId: string): Promise<EnvProject | null> {
  const result = await dynamo().send(
    new GetCommand({
      TableName: config.tableName(),
      Key: { pk: `PROJECT#${projectId}`, sk: 'PROJECT' },
      ProjectionExpression: 'id, team_id',
    }),
  );
  const item = result.Item as Partial<EnvProject> | undefined;
  return item?.team_id ? { id: item.id ?? projectId, team_id: item.team_id } : null;
}
