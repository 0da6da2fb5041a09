import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { MEMBER_NOT_FOUND, OWNERSHIP_TRANSFER_CONFLICT, OWNERSHIP_TRANSFER_TO_SELF } from '../errors/catalogue.ts';
import { getMembership } from './memberships.ts';
import { conditionFailedAt } from '../db/errors.ts';

/**
 * Moves a team's ownership from `currentOwnerId` to another admin or member;
 * the previous owner becomes admin. One transaction whose conditions re-check
 * both rows (the caller still owns the team, the target is still an admin or
 * member), so a team never has zero or two owners: of two racing transfers
 * the second finds the caller no longer owner and is refused with 409.
 */
export async function transferOwnership(teamId: string, currentOwnerId: string, newOwnerId: string): Promise<void> {
  if (newOwnerId === currentOwnerId) throw new ApiError(OWNERSHIP_TRANSFER_TO_SELF);
  const target = await getMembership(teamId, newOwnerId);
  // The owner row of the team is the caller's (the route demands role owner), so any other owner row is a race.
  if (!target) throw new ApiError(MEMBER_NOT_FOUND, { details: { new_owner_id: newOwnerId } });
  if (target.role === 'owner') throw new ApiError(OWNERSHIP_TRANSFER_CONFLICT);

  const now = new Date().toISOString();
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: config.tableName(),
              Key: keys.membership(teamId, currentOwnerId),
              UpdateExpression: 'SET #role = :admin, role_changed_at = :now',
              ConditionExpression: '#role = :owner',
              ExpressionAttributeNames: { '#role': 'role' },
              ExpressionAttributeValues: { ':admin': 'admin', ':owner': 'owner', ':now': now },
            },
          },
          {
            Update: {
              TableName: config.tableName(),
              Key: keys.membership(teamId, newOwnerId),
              UpdateExpression: 'SET #role = :owner, role_changed_at = :now',
              ConditionExpression: 'attribute_exists(pk) AND #role IN (:admin, :member)',
              ExpressionAttributeNames: { '#role': 'role' },
              ExpressionAttributeValues: { ':admin': 'admin', ':member': 'member', ':owner': 'owner', ':now': now },
            },
          },
        ],
      }),
    );
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'TransactionCanceledException' && name !== 'TransactionConflictException') throw error;
    // The target left the team while we ran: the same answer as if it had never been there.
    if (conditionFailedAt(error, 1) && !conditionFailedAt(error, 0)) {
      if (!(await getMembership(teamId, newOwnerId))) throw new ApiError(MEMBER_NOT_FOUND, { details: { new_owner_id: newOwnerId } });
    }
    throw new ApiError(OWNERSHIP_TRANSFER_CONFLICT);
  }
}
