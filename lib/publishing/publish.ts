import { readTeamState, recordSuccessfulDeploy } from '../attention/team-state.ts';
import { abuseScanOfPublish } from '../abuse/scans.ts';
import { putObject } from '../aws/s3-lite.ts';
import { deletePrefix } from '../aws/s3-prefixes.ts';
import { config } from '../config.ts';
import { TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_EXPIRED, UPLOAD_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { functionEntries } from '../functions/build.ts';
import { rootPrefix } from '../sites/root-directory.ts';
import { queueFunctionLambdas } from '../functions/prepare-lambdas.ts';
import { syncLiveSchedulesAfterMove } from '../functions/schedules.ts';
import { productionUrl } from '../projects/projects.ts';
import { cancelProvisionalExpiry } from '../projects/provisional.ts';
import { getProjectItem, pointProductionAt, projectIsActive, type ProjectItem } from '../projects/records.ts';
import { screenshotJobOfPublish } from '../screenshots/jobs.ts';
import type { RouteManifest, RouteManifestFile } from '../sites/route-manifest.ts';
import { servingRulesSummary } from '../sites/serving-rules.ts';
import { deploymentPrefix, routeManifestKey } from '../sites/storage-keys.ts';
import { rememberLiveObjects } from './blobs.ts';
import { requireOpenSession } from './files.ts';
import { receivedHashes } from './received.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';
import { closedSession, sessionClosing } from './sessions.ts';
import { readManifest } from './stored-manifest.ts';
import { contentTypeFor } from '../deployments/content-type.ts';
import { placeContents, publishBudgetMs, stillPublishing, type Placed } from './publish-contents.ts';
import { buildFailed, buildFunctionsStep } from './publish-functions.ts';
import { compileDeploymentRules } from './publish-rules.ts';
import { deploymentReady, getDeploymentItem, type DeploymentItem } from '../deployments/records.ts';

export interface FinalizeResult {
  upload_id: string;
  deployment_id: string;
  project_id: string;
  status: 'ready';
  url: string;
  file_count: number;
  total_bytes: number;
  ready_at: string;
}

/** The answer for a closed session: its deployment, or the failure of its functions build. */
async function finalizedResult(session: UploadSessionRecord): Promise<FinalizeResult> {
  const [project, deployment] = await Promise.all([
    getProjectItem(session.project_id),
    getDeploymentItem(session.project_id, session.deployment_id),
  ]);
  if (!project || !deployment) throw new ApiError(UPLOAD_NOT_FOUND);
  if (deployment.status === 'failed') throw buildFailed(deployment.build_log);
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    status: 'ready',
    url: productionUrl(project.subdomain),
    file_count: deployment.file_count,
    total_bytes: deployment.total_bytes,
    ready_at: deployment.ready_at as string,
  };
}

/** What one finalize call works on: the open session, its project and deployment as read, its manifest. */
interface Publishing {
  session: UploadSessionRecord;
  projectItem: ProjectItem;
  deploymentItem: DeploymentItem;
  slug: string;
  routeManifest: RouteManifest;
  preview: boolean;
  /** The team's attention item, read early so the successful deploy it records is one write. */
  attention: ReturnType<typeof readTeamState>;
}

/** The route manifest of the deployment: each path's content, and where it is stored when not at its own path. */
function routeManifestOf(session: UploadSessionRecord, manifest: Awaited<ReturnType<typeof readManifest>>, placed: Placed, base: object) {
  const files: Record<string, RouteManifestFile> = {};
  for (const file of manifest.files) {
    const placement = manifest.placements.get(file.hash)!;
    const object =
      placed.references.get(file.hash) ?? (placement.path === file.path ? undefined : `${session.deployment_id}/${placement.path}`);
    files[file.path] = { hash: file.hash, size: file.size, content_type: contentTypeFor(file.path), ...(object ? { object } : {}) };
  }
  return { ...base, files } as RouteManifest;
}

/** Written once: a racing finalize of the same session finds it there, with the same content. */
async function writeRouteManifest(p: Publishing): Promise<void> {
  try {
    await putObject({
      bucket: config.bucket('sites'),
      key: routeManifestKey(p.session.team_id, p.slug, p.session.deployment_id),
      body: JSON.stringify(p.routeManifest),
      contentType: 'application/json',
      ifNoneMatch: '*',
    });
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if ((error as Error).name !== 'PreconditionFailed' && status !== 412) throw error;
  }
}

/**
 * The commit, one transaction: the session closes, the deployment is ready, production points at it
 * (a preview only needs the project active), and the screenshot job's and the keyword scan's records go
 * live with it; their queueing follows. A racing finalize that committed first answers for this one.
 */
async function commitPublish(p: Publishing, emptyBuild: boolean): Promise<FinalizeResult> {
  const { session, projectItem } = p;
  // A production deployment whose functions build ran (now or in an earlier call) may have functions.
  const hasFunctions = !p.preview && !emptyBuild;
  const teamId = session.team_id;
  const readyAt = new Date().toISOString();
  const url = productionUrl(projectItem.subdomain);
  const ids = { projectId: session.project_id, teamId, deploymentId: session.deployment_id };
  const screenshot = p.preview ? null : screenshotJobOfPublish({ ...ids, url });
  const scan = abuseScanOfPublish({
    ...ids,
    slug: p.slug,
    subdomain: projectItem.subdomain,
    branch: session.branch ?? projectItem.default_branch,
    deployedAt: readyAt,
  });
  try {
    await transact([
      ...sessionClosing(session, readyAt),
      deploymentReady(
        session.project_id,
        session.deployment_id,
        readyAt,
        emptyBuild,
        p.routeManifest.serving_rules ? servingRulesSummary(p.routeManifest.serving_rules) : null,
      ),
      p.preview ? projectIsActive(session.project_id) : pointProductionAt(session.project_id, session.deployment_id, readyAt),
      ...(screenshot ? [screenshot.write] : []),
      ...scan.writes,
    ]);
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    const closed = await closedSession(session.upload_id);
    if (closed) return finalizedResult(closed);
    const project = await getProjectItem(session.project_id, true);
    if (!project || project.status !== 'active') {
      // The expiry won: the copies made above belong to nothing.
      await deletePrefix(config.bucket('sites'), deploymentPrefix(teamId, p.slug, session.deployment_id)).catch(() => undefined);
      throw new ApiError(PROJECT_EXPIRED);
    }
    throw error;
  }
  // The deployment is live. What follows is independent work (a record about it, and the queueing of work
  // taken off this path), done at once rather than one after another; none of it fails the publish.
  const queued = Promise.all([
    // Activation and the paying-idle clock (lib/attention/team-state.ts).
    recordSuccessfulDeploy(teamId, new Date(readyAt), p.attention),
    !p.preview && projectItem.provisional_until ? cancelProvisionalExpiry(session.project_id).catch(() => undefined) : undefined,
    screenshot?.queue(),
    scan.queue(),
    // Production moved: the schedules become those of this deployment's functions (none when it has no functions).
    p.preview ? undefined : syncLiveSchedulesAfterMove(session.project_id),
    // Its functions' Lambdas are made now, off the request path (lib/functions/prepare-lambdas.ts).
    hasFunctions ? queueFunctionLambdas({ project_id: session.project_id, deployment_id: session.deployment_id }) : undefined,
  ]);
  // What the next redeploy of the project references, remembered while those requests travel.
  if (!p.preview) rememberLiveObjects(p.routeManifest);
  await queued;
  // The committed transaction wrote exactly this: no need to read it back.
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    status: 'ready',
    url,
    file_count: p.deploymentItem.file_count,
    total_bytes: p.deploymentItem.total_bytes,
    ready_at: readyAt,
  };
}

/**
 * POST /api/v1/uploads/{upload_id}/finalize. Uploads already stored each
 * content in the deployment folder (`{team_id}/{slug}/{deployment_id}/{path}`,
 * at its first path). Finalize checks that every file asked for is there, finds
 * the contents the team already held (the live deployment's objects and this
 * project's earlier ones are referenced, another project's are copied in:
 * publish-contents.ts), builds the deployment's functions (publish-functions.ts;
 * a failed build ends the session with FUNCTIONS_BUILD_FAILED and publishes
 * nothing), compiles its `_redirects` and `_headers` into the route manifest (publish-rules.ts), writes the
 * route manifest once, then in one transaction marks the
 * deployment ready, points production at it, clears provisional_until and
 * closes the session (lib/uploads/sessions.ts owns those writes). A repeated
 * (or concurrent) finalize answers with the same deployment.
 */
export async function finalizeUpload(session: UploadSessionRecord): Promise<FinalizeResult> {
  if (session.status === 'finalized') return finalizedResult(session);
  requireOpenSession(session);
  const teamId = session.team_id;
  // What the session's upload requests recorded as stored (lib/uploads/received.ts), read while the
  // project is: one query where a listing of the folder would take a call per thousand keys.
  const recorded = receivedHashes(session.upload_id);
  recorded.catch(() => undefined);
  const attention = readTeamState(teamId);
  const [projectItem, deploymentItem, manifest] = await Promise.all([
    getProjectItem(session.project_id, true),
    getDeploymentItem(session.project_id, session.deployment_id),
    readManifest(session),
  ]);
  if (!projectItem || projectItem.status !== 'active') throw new ApiError(PROJECT_EXPIRED);
  if (!deploymentItem) throw new ApiError(UPLOAD_NOT_FOUND);
  const slug = projectItem.slug;
  const prefix = deploymentPrefix(teamId, slug, session.deployment_id);
  // The uploads stored under the slug the session began with: their record speaks for this folder only
  // while that is still the project's.
  const received = slug === session.project_slug ? await recorded : new Set<string>();
  const liveDeploymentId = projectItem.live_deployment_id;
  const placed = await placeContents({ session, manifest, slug, prefix, liveDeploymentId, received });
  const routeManifest = routeManifestOf(session, manifest, placed, {
    project_slug: slug,
    project_id: session.project_id,
    team_id: teamId,
    deployment_id: session.deployment_id,
    created_at: deploymentItem.created_at,
  });

  // A preview commits beside production: it never moves live_deployment_id and never deploys functions.
  const preview = session.target === 'preview';
  const root = rootPrefix(projectItem.root_directory);
  const hasFunctions =
    !preview && !deploymentItem.functions_built_at && functionEntries(Object.keys(routeManifest.files), root).entries.length > 0;
  // Copying used most of this call: the build starts afresh in the next one.
  if (hasFunctions && placed.copied > 0 && Date.now() - placed.started > publishBudgetMs() / 2) throw stillPublishing(placed, manifest);
  const step = preview ? { emptyBuild: true } : await buildFunctionsStep(session, projectItem, deploymentItem, routeManifest);
  if ('settled' in step) return finalizedResult(step.settled);
  const servingRules = await compileDeploymentRules(routeManifest);
  if (servingRules) routeManifest.serving_rules = servingRules;
  const publishing: Publishing = { session, projectItem, deploymentItem, slug, routeManifest, preview, attention };
  await writeRouteManifest(publishing);
  return commitPublish(publishing, step.emptyBuild);
}
