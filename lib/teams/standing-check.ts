import type { NamedWrite } from '../db/transact.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { TEAM_SUSPENDED } from '../errors/catalogue/sites.ts';

/**
 * The team exists and is not suspended, as a condition of a transaction that creates something for it
 * (a project, an upload session): a suspension racing the write wins, and the write answers TEAM_SUSPENDED.
 */
export function teamInGoodStanding(teamId: string): NamedWrite {
  return {
    name: 'team',
    write: {
      ConditionCheck: {
        Key: keys.team(teamId),
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(suspended_at) OR suspended_at = :null)',
        ExpressionAttributeValues: { ':null': null },
      },
    },
    refusal: () => new ApiError(TEAM_SUSPENDED),
  };
}
