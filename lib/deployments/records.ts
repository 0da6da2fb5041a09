import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { type ExpressionValues, getItem, type Stored, type PageKey, pageKey } from '../db/item.ts';
import { keys } from '../db/keys.ts';
import { readIndexPage } from '../db/query.ts';
import type { NamedWrite } from '../db/transact.ts';
import type { ServingRulesSummary } from '../sites/serving-rules.ts';
import type { UploadSessionRecord } from './session-record.ts';

/** A build's states, as its deployment item holds them (the build runner moves them: lib/builds/). */
export type BuildStatus = 'queued' | 'building' | 'ready' | 'failed' | 'canceled' | 'skipped';
export type DeploymentStatus = 'uploading' | BuildStatus;
export type BuildTrigger = 'push' | 'merge_request' | 'manual';
export type BuildTarget = 'production' | 'preview';

/**
 * The deployment items of a project (layout in docs/sites.md): an upload's deployment is written
 * `uploading` with its session and becomes `ready` (or `failed`, its functions build's log kept)
 * in the transaction that closes the session; a build's (lib/builds/build-records.ts) publishes from
 * `building`. Each move is conditional on the state it leaves, so two finalizes never both move it.
 */

/** The states a deployment publishes from: an upload's `uploading`, a build's `building`. */
const PUBLISHABLE = {
  ConditionExpression: '#status IN (:uploading, :building)',
  values: { ':uploading': 'uploading', ':building': 'building' },
};

/**
 * The deployment item: what every deployment holds, its upload's session and functions build, and
 * (optional) the fields of a build (lib/builds/build-records.ts writes them; docs/builds.md).
 * Items written before a field existed lack it, so optional fields are read with a default.
 */
export type DeploymentItem = Stored<{
  type: 'deployment';
  id: string;
  project_id: string;
  team_id: string;
  status: DeploymentStatus;
  label: string | null;
  created_at: string;
  ready_at: string | null;
  file_count: number;
  total_bytes: number;
  upload_id?: string;
  /** An upload's functions build: its log lines and the functions it built. */
  build_log?: string[];
  functions?: string[];
  functions_built_at?: string;
  serving_rules?: ServingRulesSummary;
  trigger?: BuildTrigger | null;
  target?: BuildTarget | null;
  branch?: string | null;
  commit_sha?: string | null;
  commit_message?: string | null;
  preview_label?: string | null;
  merge_request?: number | null;
  queued_at?: string | null;
  started_at?: string | null;
  finished_at?: string | null;
  skip_reason?: string | null;
  log_lines?: number;
  log_read?: number;
  build_handle?: string;
  cancel_requested_at?: string;
  cancel_reason?: string;
  failure_message?: string | null;
  failure_kind?: 'user' | 'platform';
  lost_at?: string;
}>;

export function getDeploymentItem(projectId: string, deploymentId: string): Promise<DeploymentItem | null> {
  return getItem<DeploymentItem>(keys.deployment(projectId, deploymentId), true);
}

/** One numbered page of a project's deployments, newest first, from its deployments index. */
export function deploymentPage(projectId: string, paging: { page: number; pageSize: number }) {
  return readIndexPage<DeploymentItem>({
    tableName: config.tableName(),
    indexName: 'gsi1',
    partition: { name: 'gsi1pk', value: keys.deploymentByProject(projectId, '', '').gsi1pk },
    page: paging.page,
    pageSize: paging.pageSize,
    newestFirst: true,
  });
}

/** An upload's deployment (`deployment`), `uploading` until its session is finalized. */
export function uploadingDeployment(session: UploadSessionRecord): NamedWrite {
  return {
    name: 'deployment',
    write: {
      Put: {
        Item: {
          ...keys.deployment(session.project_id, session.deployment_id),
          ...keys.deploymentByProject(session.project_id, session.created_at, session.deployment_id),
          type: 'deployment',
          id: session.deployment_id,
          project_id: session.project_id,
          team_id: session.team_id,
          status: 'uploading',
          label: session.label,
          created_at: session.created_at,
          ready_at: null,
          file_count: session.file_count,
          total_bytes: session.total_bytes,
          upload_id: session.upload_id,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

/** A build's deployment (`deployment`, still `building`) takes the session of its output. */
export function buildOutputSession(session: UploadSessionRecord): NamedWrite {
  return {
    name: 'deployment',
    write: {
      Update: {
        Key: keys.deployment(session.project_id, session.deployment_id),
        UpdateExpression: 'SET upload_id = :upload, file_count = :files, total_bytes = :bytes',
        ConditionExpression: '#status = :building',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':upload': session.upload_id,
          ':files': session.file_count,
          ':bytes': session.total_bytes,
          ':building': 'building',
        },
      },
    },
  };
}

/** The deployment is `ready` (`deployment`); `emptyBuild` records a functions build that found no functions. */
export function deploymentReady(
  projectId: string,
  deploymentId: string,
  now: string,
  emptyBuild: boolean,
  servingRules: ServingRulesSummary | null = null,
): NamedWrite {
  const sets = ['#status = :ready', 'ready_at = :now'];
  const names: Record<string, string> = { '#status': 'status' };
  const values: ExpressionValues = { ':ready': 'ready', ...PUBLISHABLE.values, ':now': now };
  if (emptyBuild) {
    sets.push('build_log = :log', '#functions = :none', 'functions_built_at = :now');
    names['#functions'] = 'functions';
    Object.assign(values, { ':log': [], ':none': [] });
  }
  // What the API reports of the rules compiled into the route manifest (counts and the first skipped lines).
  if (servingRules) {
    sets.push('serving_rules = :rules');
    values[':rules'] = servingRules;
  }
  return {
    name: 'deployment',
    write: {
      Update: {
        Key: keys.deployment(projectId, deploymentId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: PUBLISHABLE.ConditionExpression,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    },
  };
}

/** The deployment `failed` (`deployment`): its functions build did not build, and its log says why. */
export function deploymentFailed(projectId: string, deploymentId: string, now: string, log: string[]): NamedWrite {
  return {
    name: 'deployment',
    write: {
      Update: {
        Key: keys.deployment(projectId, deploymentId),
        UpdateExpression: 'SET #status = :failed, build_log = :log, #functions = :none, failed_at = :now',
        ConditionExpression: PUBLISHABLE.ConditionExpression,
        ExpressionAttributeNames: { '#status': 'status', '#functions': 'functions' },
        ExpressionAttributeValues: { ':failed': 'failed', ...PUBLISHABLE.values, ':log': log, ':none': [], ':now': now },
      },
    },
  };
}

/**
 * Records a functions build that succeeded, before the publish commits; false when a racing finalize
 * already committed (or failed) the deployment.
 */
export async function recordFunctionsBuilt(
  projectId: string,
  deploymentId: string,
  build: { log: string[]; functions: string[]; now: string },
): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.deployment(projectId, deploymentId),
        UpdateExpression: 'SET build_log = :log, #functions = :functions, functions_built_at = :now',
        ConditionExpression: PUBLISHABLE.ConditionExpression,
        ExpressionAttributeNames: { '#status': 'status', '#functions': 'functions' },
        ExpressionAttributeValues: { ':log': build.log, ':functions': build.functions, ':now': build.now, ...PUBLISHABLE.values },
      }),
    );
    return true;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return false;
  }
}

/** The deployment is still `ready` (`deployment`): promote's condition. */
export function deploymentIsReady(projectId: string, deploymentId: string, refusal: () => Error): NamedWrite {
  return {
    name: 'deployment',
    write: {
      ConditionCheck: {
        Key: keys.deployment(projectId, deploymentId),
        ConditionExpression: '#status = :ready',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':ready': 'ready' },
      },
    },
    refusal,
  };
}

/** One page of the deployments made before the project's deployments index existed (a table scan: operators only). */
export async function unindexedDeployments(start?: PageKey) {
  const page = await dynamo().send(
    new ScanCommand({
      TableName: config.tableName(),
      FilterExpression: '#type = :deployment AND attribute_not_exists(gsi1pk)',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':deployment': 'deployment' },
      ExclusiveStartKey: start,
    }),
  );
  return { items: (page.Items ?? []) as DeploymentItem[], next: pageKey(page.LastEvaluatedKey) };
}

/** Gives a deployment its index keys, unless it has them already (a racing run); true when this call did. */
export async function indexDeployment(item: DeploymentItem): Promise<boolean> {
  const index = keys.deploymentByProject(item.project_id, item.created_at, item.id);
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
    return true;
  } catch (error) {
    if (!isConditionalCheckFailure(error)) throw error;
    return false;
  }
}
