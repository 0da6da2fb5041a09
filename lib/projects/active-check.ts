import { config } from '../config.ts';
import { keys } from '../db/keys.ts';

/**
 * A transaction item that holds only while the project is `active`: a write
 * that must not land for a project on its way out (deleting, expired) carries
 * it, and loses to the status change whichever comes first.
 */
export function projectActiveCheck(projectId: string) {
  return {
    ConditionCheck: {
      TableName: config.tableName(),
      Key: keys.project(projectId),
      ConditionExpression: '#status = :active',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':active': 'active' },
    },
  };
}
