import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import type { ProjectItem } from '../projects/records.ts';
import type { ExpressionValues } from '../db/item.ts';

/**
 * The Git side of a project item that no settings save writes: the sealed
 * webhook secret, what pushes report (`repo_default_branch`,
 * `production_branch_deleted_at`), and the repository index (gsi2, written
 * by settings with `git_repo_url`, read here).
 */

/** Every project whose `git_repo_url` names this repository (lib/builds/repo-url.ts), from the index: never a scan. */
export async function projectsForRepo(repoKey: string): Promise<ProjectItem[]> {
  const items = await queryAll<ProjectItem>({
    TableName: config.tableName(),
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.projectByRepo(repoKey, '').gsi2pk },
  });
  return items.filter((item) => item.type === 'project' && item.status === 'active');
}

async function updateActiveProject(projectId: string, update: string, values: ExpressionValues, condition?: string): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        UpdateExpression: update,
        ConditionExpression: `#status = :active${condition ? ` AND ${condition}` : ''}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': 'active', ...values },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Replaces the project's webhook secret (sealed by lib/builds/git-secrets.ts). */
export function storeWebhookSecret(projectId: string, sealed: string): Promise<boolean> {
  return updateActiveProject(projectId, 'SET git_webhook_secret_sealed = :sealed, updated_at = :now', {
    ':sealed': sealed,
    ':now': new Date().toISOString(),
  });
}

/** What a push reports: the forge's default branch, and (a push to it) that the production branch exists. */
export function notePush(
  projectId: string,
  input: { repoDefaultBranch: string | null; productionBranchPushed: boolean },
): Promise<boolean> {
  const sets: string[] = [];
  const values: ExpressionValues = {};
  if (input.repoDefaultBranch) {
    sets.push('repo_default_branch = :repoDefault');
    values[':repoDefault'] = input.repoDefaultBranch;
  }
  if (input.productionBranchPushed) {
    sets.push('production_branch_deleted_at = :null');
    values[':null'] = null;
  }
  if (sets.length === 0) return Promise.resolve(true);
  return updateActiveProject(projectId, `SET ${sets.join(', ')}`, values);
}

/** A push deleted the production branch: noted once (the first deletion's time stands). */
export function markProductionBranchDeleted(projectId: string): Promise<boolean> {
  return updateActiveProject(
    projectId,
    'SET production_branch_deleted_at = :now',
    { ':now': new Date().toISOString(), ':null': null },
    '(attribute_not_exists(production_branch_deleted_at) OR production_branch_deleted_at = :null)',
  );
}
