import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { getItem, type Stored, type TableKey, type PageKey, pageKey } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import type { NamedWrite } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { PLAN_LIMIT_EXCEEDED, PROJECT_NAME_TAKEN } from '../errors/catalogue/sites.ts';
import type { Plan } from '../plans.ts';
import type { ProjectRecord } from './projects.ts';

/**
 * The records of a project (layout in docs/sites.md): the project item, the global subdomain hold,
 * the team's name hold and the team's project count. Every write that moves a hold or the project's
 * status is conditional here, so racing requests cannot both claim a name, an address or a removal.
 */

/** The latest screenshot as the project item keeps it: the PNG's key, signed on each read. */
export type StoredScreenshot = {
  job_id: string;
  deployment_id: string;
  captured_at: string;
  capture_http_status: number | null;
  width: number;
  height: number;
  image_key: string;
};

/**
 * The project item: its record (nulls are stored as nulls so every field reads back), the team's
 * listing index (gsi1), the repository index (gsi2, while Git is connected), and what other modules
 * keep on it: the removal's start, the primary domain's hostname, the latest screenshot, the sealed
 * webhook and callback secrets, the breaker's failure signature.
 */
export type ProjectItem = Stored<
  ProjectRecord & {
    type: 'project';
    deletion_requested_at?: string;
    primary_domain_hostname?: string | null;
    latest_screenshot?: StoredScreenshot;
    git_webhook_secret_sealed?: string;
    git_access_token_sealed?: string;
    functions_callback_secret_sealed?: string;
    build_failure_signature?: string | null;
  }
>;

/** A subdomain's platform-wide hold: which project answers to it. */
export type SubdomainHold = TableKey & { type: 'subdomain_hold'; subdomain: string; project_id: string; team_id: string };

/** The stored item of a project: its record plus keys (nulls are stored as nulls so every field reads back). */
export function projectItem(record: ProjectRecord): ProjectItem {
  return {
    ...keys.project(record.id),
    ...keys.projectByTeam(record.team_id, record.created_at, record.id),
    type: 'project',
    ...record,
  };
}

export function getProjectItem(projectId: string, consistent = false): Promise<ProjectItem | null> {
  return getItem<ProjectItem>(keys.project(projectId), consistent);
}

/** The hold of a subdomain: which project answers to it. */
export function getSubdomainHold(subdomain: string, consistent = false): Promise<SubdomainHold | null> {
  return getItem<SubdomainHold>(keys.subdomainHold(subdomain), consistent);
}

/** One page of a team's project items, newest first, from the team's index partition (never a scan). */
export async function queryTeamProjectItems(
  teamId: string,
  options: { limit: number; startKey?: PageKey },
): Promise<{ items: ProjectItem[]; lastKey: PageKey | null }> {
  const reply = await dynamo().send(
    new QueryCommand({
      TableName: config.tableName(),
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.projectByTeam(teamId, '', '').gsi1pk },
      ScanIndexForward: false,
      Limit: options.limit,
      ExclusiveStartKey: options.startKey,
    }),
  );
  return { items: (reply.Items ?? []) as ProjectItem[], lastKey: pageKey(reply.LastEvaluatedKey) ?? null };
}

/** Every project item of a team (its purge removes them all). */
export function teamProjectItems(teamId: string): Promise<ProjectItem[]> {
  return queryAll<ProjectItem>({
    TableName: config.tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.projectByTeam(teamId, '', '').gsi1pk },
  });
}

/** Every item of the project's partition (the project, its deployments, functions, variables, ...). */
export function projectPartition(projectId: string): Promise<Stored<{ name?: string }>[]> {
  return queryAll<Stored<{ name?: string }>>({
    TableName: config.tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.project(projectId).pk },
    ConsistentRead: true,
  });
}

/**
 * Holds only while the project is `active`: a write that must not land for a project on its way out
 * (deleting, expired) carries it, and loses to the status change whichever comes first.
 */
export function projectIsActive(projectId: string, refusal?: () => Error): NamedWrite {
  return {
    name: 'project',
    write: {
      ConditionCheck: {
        Key: keys.project(projectId),
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': 'active' },
      },
    },
    ...(refusal ? { refusal } : {}),
  };
}

export const holdItem = (record: { subdomain: string; id: string }, teamId: string): SubdomainHold => ({
  ...keys.subdomainHold(record.subdomain),
  type: 'subdomain_hold',
  subdomain: record.subdomain,
  project_id: record.id,
  team_id: teamId,
});

export const nameHoldItem = (teamId: string, name: string, projectId: string) => ({
  ...keys.projectName(teamId, name),
  type: 'project_name',
  name,
  project_id: projectId,
  team_id: teamId,
});

/**
 * The writes of a new project after the team's standing: the plan's site count (`site_count`), the global
 * subdomain hold (`subdomain`: no refusal, the caller picks another or refuses), the team's name hold
 * (`name`) and the project (`project`).
 */
export function newProjectWrites(teamId: string, plan: Plan, record: ProjectRecord, item: ProjectItem): NamedWrite[] {
  return [
    {
      name: 'site_count',
      write: {
        Update: {
          Key: keys.teamProjectCount(teamId),
          UpdateExpression: 'SET project_count = if_not_exists(project_count, :zero) + :one',
          ConditionExpression: 'attribute_not_exists(project_count) OR project_count < :limit',
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':limit': plan.siteLimit },
        },
      },
      refusal: () =>
        new ApiError(PLAN_LIMIT_EXCEEDED, {
          message: `The ${plan.name} plan allows ${plan.siteLimit} sites; this team has reached it.`,
          details: { limit: 'sites', plan: plan.name, max_sites: plan.siteLimit },
        }),
    },
    {
      name: 'subdomain',
      write: { Put: { Item: holdItem(record, teamId), ConditionExpression: 'attribute_not_exists(pk)' } },
    },
    {
      name: 'name',
      write: { Put: { Item: nameHoldItem(teamId, record.name, record.id), ConditionExpression: 'attribute_not_exists(pk)' } },
      refusal: () => new ApiError(PROJECT_NAME_TAKEN, { details: { name: record.name } }),
    },
    { name: 'project', write: { Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } } },
  ];
}

/** A provisional project's expiry moved to `until` by a new upload session; fails once it published or left `active`. */
export function extendProvisional(projectId: string, until: string, now: string): NamedWrite {
  return {
    name: 'project',
    write: {
      Update: {
        Key: keys.project(projectId),
        UpdateExpression: 'SET provisional_until = :until, updated_at = :now',
        ConditionExpression: '#status = :active AND attribute_exists(provisional_until) AND provisional_until <> :null',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':until': until, ':now': now, ':active': 'active', ':null': null },
      },
    },
  };
}

/**
 * Production points at a deployment and the project is provisional no more. The expiry worker claims a
 * project by setting status 'deleting' only while nothing is live; this condition makes publish and expiry
 * exclusive, whichever comes first wins.
 */
export function pointProductionAt(projectId: string, deploymentId: string, now: string, options = { publish: true }): NamedWrite {
  return {
    name: 'project',
    write: {
      Update: {
        Key: keys.project(projectId),
        // A publish ends the provisional state; a promote (options.publish false) finds none to end.
        UpdateExpression: `SET live_deployment_id = :deployment, updated_at = :now${options.publish ? ' REMOVE provisional_until' : ''}`,
        ConditionExpression: '#status = :active',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':deployment': deploymentId, ':now': now, ':active': 'active' },
      },
    },
  };
}

/** Claims a provisional project whose time is up and which never published (status 'deleting'); false when it is not one. */
export async function claimExpiredProvisional(projectId: string, now: Date): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        UpdateExpression: 'SET #status = :deleting, updated_at = :now',
        ConditionExpression:
          '#status = :active AND attribute_exists(provisional_until) AND provisional_until <= :now AND ' +
          '(attribute_not_exists(live_deployment_id) OR live_deployment_id = :null)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':deleting': 'deleting', ':active': 'active', ':now': now.toISOString(), ':null': null },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** Sets `deleting` on an active (or already deleting) project; false when there is no such project. */
export async function markDeleting(projectId: string, now: Date): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        UpdateExpression: 'SET #status = :deleting, deletion_requested_at = if_not_exists(deletion_requested_at, :now), updated_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND #status IN (:active, :deleting)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':deleting': 'deleting', ':active': 'active', ':now': now.toISOString() },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** The project's primary domain, this domain being removed, is cleared with its hostname (`project`: it still is). */
export function primaryDomainCleared(projectId: string, domainId: string, at: string): NamedWrite {
  return {
    name: 'project',
    write: {
      Update: {
        Key: keys.project(projectId),
        UpdateExpression: 'SET primary_domain_id = :none, primary_domain_hostname = :none, updated_at = :at',
        ConditionExpression: 'primary_domain_id = :id',
        ExpressionAttributeValues: { ':none': null, ':at': at, ':id': domainId },
      },
    },
  };
}

/** The project's primary domain is still not this domain being removed (`project`). */
export function primaryDomainIsNot(projectId: string, domainId: string): NamedWrite {
  return {
    name: 'project',
    write: {
      ConditionCheck: {
        Key: keys.project(projectId),
        ConditionExpression:
          'attribute_not_exists(pk) OR attribute_not_exists(primary_domain_id) OR attribute_type(primary_domain_id, :nullType) OR primary_domain_id <> :id',
        ExpressionAttributeValues: { ':nullType': 'NULL', ':id': domainId },
      },
    },
  };
}

/** The project's latest screenshot (`captured_at` orders them): a later capture replaces an earlier one, never the reverse. */
export async function recordLatestScreenshot(projectId: string, shot: StoredScreenshot): Promise<void> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        UpdateExpression: 'SET latest_screenshot = :shot',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(latest_screenshot) OR latest_screenshot.captured_at < :now)',
        ExpressionAttributeValues: { ':now': shot.captured_at, ':shot': shot },
      }),
    );
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
  }
}

/** A team's purge claims each of its projects for removal, whatever state it is in. */
export async function forceDeleting(projectId: string, now: Date): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: config.tableName(),
      Key: keys.project(projectId),
      UpdateExpression: 'SET #status = :deleting, deletion_requested_at = if_not_exists(deletion_requested_at, :now)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':deleting': 'deleting', ':now': now.toISOString() },
    }),
  );
}

/**
 * The last writes of a removal: the project item (`project`, only while `deleting`), its subdomain and
 * name holds (where still its own) and its place in the team's count.
 */
export function removedProjectWrites(project: ProjectItem): NamedWrite[] {
  const teamId = project.team_id;
  const heldBy = { ':project': project.id };
  return [
    {
      name: 'project',
      write: {
        Delete: {
          Key: keys.project(project.id),
          ConditionExpression: '#status = :deleting',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':deleting': 'deleting' },
        },
      },
    },
    {
      name: 'subdomain',
      write: {
        Delete: {
          Key: keys.subdomainHold(project.subdomain),
          ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
          ExpressionAttributeValues: heldBy,
        },
      },
    },
    {
      name: 'name',
      write: {
        Delete: {
          Key: keys.projectName(teamId, project.name),
          ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
          ExpressionAttributeValues: heldBy,
        },
      },
    },
    {
      name: 'site_count',
      write: {
        Update: {
          Key: keys.teamProjectCount(teamId),
          UpdateExpression: 'SET project_count = project_count - :one',
          ConditionExpression: 'project_count > :zero',
          ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
        },
      },
    },
  ];
}
