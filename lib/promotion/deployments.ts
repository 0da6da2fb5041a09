import { TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { DEPLOYMENT_NOT_FOUND, DEPLOYMENT_NOT_READY, PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { promoteView, toProject } from '../projects/projects.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { getProjectItem, pointProductionAt, type ProjectItem } from '../projects/records.ts';
import { deploymentIsReady, deploymentPage, getDeploymentItem, type DeploymentItem } from '../deployments/records.ts';
import { logger } from '../logger.ts';
import { NO_SERVING_RULES, type ServingRulesSummary } from '../sites/serving-rules.ts';
import { reviveScanOfDeployment } from '../abuse/scan-records.ts';
import { syncLiveSchedulesAfterMove } from '../functions/schedules.ts';
import { readLogLines } from '../builds/build-log-records.ts';
import { settleIfLost } from '../builds/lost.ts';
import { deploymentBuildFields, type DeploymentBuildFields, type DeploymentStatus } from '../builds/view.ts';

export interface Deployment extends DeploymentBuildFields {
  id: string;
  project_id: string;
  team_id: string;
  /**
   * An upload is `uploading`, then `ready`, or `failed` when its functions build failed (see `build_log`).
   * A build is `queued`, `building`, then `ready`, `failed` or `canceled`, or was recorded `skipped`.
   */
  status: DeploymentStatus;
  label: string | null;
  created_at: string;
  ready_at: string | null;
  file_count: number;
  total_bytes: number;
  /** Whether production serves this deployment now. */
  is_live: boolean;
}

function toDeployment(item: DeploymentItem, project: ProjectItem): Deployment {
  const liveId = project.live_deployment_id;
  return {
    id: item.id,
    project_id: item.project_id,
    team_id: item.team_id,
    status: item.status as Deployment['status'],
    label: item.label ?? null,
    created_at: item.created_at,
    ready_at: item.ready_at ?? null,
    file_count: item.file_count,
    total_bytes: item.total_bytes,
    is_live: item.id === liveId,
    ...deploymentBuildFields(item, project),
  };
}

/** One deployment with its functions build: the log lines and the names of the functions it holds. */
export interface DeploymentDetail extends Deployment {
  build_log: string[];
  functions: string[];
  /** The `_redirects` and `_headers` compiled at publish: counts and skipped lines (none before it is ready). */
  serving_rules: ServingRulesSummary;
}

/** GET /api/v1/projects/{id}/deployments/{deployment_id}: a deployment of this project (another project's id is not found). */
export async function getDeployment(project: ProjectItem, deploymentId: string): Promise<DeploymentDetail> {
  if (!UUID_PATTERN.test(deploymentId)) throw new ApiError(DEPLOYMENT_NOT_FOUND, { details: { deployment_id: deploymentId } });
  const found = await getDeploymentItem(project.id, deploymentId.toLowerCase());
  if (!found) throw new ApiError(DEPLOYMENT_NOT_FOUND, { details: { deployment_id: deploymentId } });
  const item = await settleIfLost(found);
  // A build's log is in its own items (lib/builds/build-log-records.ts), capped; an upload's is its functions build's.
  const buildLog = item.trigger ? await readLogLines(item.id, 0, item.log_lines ?? 0) : null;
  return {
    ...toDeployment(item, project),
    build_log: buildLog ?? (Array.isArray(item.build_log) ? (item.build_log as string[]) : []),
    functions: Array.isArray(item.functions) ? (item.functions as string[]) : [],
    serving_rules: (item.serving_rules as ServingRulesSummary | undefined) ?? NO_SERVING_RULES,
  };
}

/**
 * A project's deployments, newest first, one numbered page (docs/builds.md): read from the
 * project's deployments index, so a build's log lines (their own items) are never read. A build
 * on the page whose worker was lost is ended first (lib/builds/lost.ts).
 */
export async function listDeployments(project: ProjectItem, paging: { page: number; pageSize: number }) {
  const { total, items } = await deploymentPage(project.id, paging);
  const settled = await Promise.all(items.map(settleIfLost));
  return { page: paging.page, page_size: paging.pageSize, total, deployments: settled.map((item) => toDeployment(item, project)) };
}

/**
 * POST /api/v1/projects/{id}/promote: points production at an existing ready
 * deployment of this project. Instant: one conditional write, no object is
 * copied (the deployment's files and route manifest are already in place).
 */
export async function promoteDeployment(project: ProjectItem, deploymentId: string) {
  const projectId = project.id;
  const notFound = () => new ApiError(DEPLOYMENT_NOT_FOUND, { details: { deployment_id: deploymentId } });
  if (!UUID_PATTERN.test(deploymentId)) throw notFound();
  // The deployment is looked up inside this project's partition: another project's id is simply not found.
  const deployment = await getDeploymentItem(projectId, deploymentId.toLowerCase());
  if (!deployment) throw notFound();
  if (deployment.status !== 'ready') {
    throw new ApiError(DEPLOYMENT_NOT_READY, { details: { deployment_id: deployment.id, status: deployment.status } });
  }
  try {
    await transact([
      deploymentIsReady(projectId, deployment.id, notFound),
      pointProductionAt(projectId, deployment.id, new Date().toISOString(), { publish: false }),
    ]);
  } catch (error) {
    if (error instanceof TransactionRefused) throw new ApiError(PROJECT_NOT_FOUND);
    throw error;
  }
  await Promise.all([
    // The schedules become the promoted deployment's, at once (lib/functions/schedules.ts).
    syncLiveSchedulesAfterMove(projectId),
    // A deployment live again brings its keyword scan back to the admin listing as new (lib/abuse/scans.ts).
    reviveScanOfDeployment(projectId, deployment.id).catch((error: unknown) =>
      logger.warn('abuse scan of the promoted deployment not revived', { project_id: projectId, error: String(error) }),
    ),
  ]);
  const updated = await getProjectItem(projectId, true);
  if (!updated) throw new ApiError(PROJECT_NOT_FOUND);
  return promoteView(toProject(updated));
}
