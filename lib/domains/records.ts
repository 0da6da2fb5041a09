import { keys } from '../db/keys.ts';
import type { NamedWrite } from '../db/transact.ts';

/**
 * The domain is still this project's, verified and not removed (`primary_domain`): a project's settings
 * save that makes it the primary domain carries it, so a removal racing the save wins.
 */
export function domainQualifiesAsPrimary(domainId: string, projectId: string): NamedWrite {
  return {
    name: 'primary_domain',
    write: {
      ConditionCheck: {
        Key: keys.domain(domainId),
        ConditionExpression: 'project_id = :project AND #domainStatus = :verified AND attribute_type(deleted_at, :nullType)',
        ExpressionAttributeNames: { '#domainStatus': 'status' },
        ExpressionAttributeValues: { ':project': projectId, ':verified': 'verified', ':nullType': 'NULL' },
      },
    },
  };
}
