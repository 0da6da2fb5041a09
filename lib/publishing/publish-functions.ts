import { recordDeployFailure } from '../attention/team-state.ts';
import { TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { FUNCTIONS_BUILD_FAILED } from '../errors/catalogue/sites.ts';
import { buildDeploymentFunctions } from '../functions/build.ts';
import type { RouteManifest } from '../sites/route-manifest.ts';
import { manifestObjectKey } from '../sites/storage-keys.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';
import { closedSession, sessionClosing } from './sessions.ts';
import { deploymentFailed, recordFunctionsBuilt, type DeploymentItem } from '../deployments/records.ts';
import type { ProjectItem } from '../projects/records.ts';

/** The answer of a finalize whose functions build failed: the same, every time the session is finalized again. */
export const buildFailed = (buildLog: unknown) =>
  new ApiError(FUNCTIONS_BUILD_FAILED, { details: { build_log: Array.isArray(buildLog) ? buildLog : [] } });

/**
 * The functions build, once per deployment (a resumed or repeated finalize
 * finds `functions_built_at` and goes on). Success leaves the bundles, the
 * function records and the build log in place before the commit transaction,
 * so once production points at the deployment its functions exist. Failure
 * publishes nothing: the deployment becomes `failed` with its build log, the
 * session is closed and its team slot released in one transaction, production
 * stays where it was, and this call and every later finalize of the session
 * answer FUNCTIONS_BUILD_FAILED with the log. Returns the closed session only
 * when a racing finalize settled it first.
 */
export async function buildFunctionsStep(
  session: UploadSessionRecord,
  projectItem: ProjectItem,
  deploymentItem: DeploymentItem,
  routeManifest: RouteManifest,
): Promise<{ settled: UploadSessionRecord } | { emptyBuild: boolean }> {
  if (deploymentItem.functions_built_at) return { emptyBuild: false };
  const build = await buildDeploymentFunctions({
    teamId: session.team_id,
    projectId: session.project_id,
    deploymentId: session.deployment_id,
    subdomain: projectItem.subdomain,
    rootDirectory: projectItem.root_directory,
    paths: Object.keys(routeManifest.files),
    objectKey: (path) => {
      const key = manifestObjectKey(routeManifest, path, routeManifest.files[path]!);
      if (!key) throw new Error(`route manifest of ${session.deployment_id} names an object outside the project: ${path}`);
      return key;
    },
  });
  const now = new Date().toISOString();
  // No functions: nothing built that a resumed finalize could skip, so the (empty) build is recorded by the commit.
  if (build.ok && build.functions.length === 0 && build.log.length === 0) return { emptyBuild: true };
  if (build.ok) {
    // False when a racing finalize already committed (or failed) this deployment: the commit finds out.
    await recordFunctionsBuilt(session.project_id, session.deployment_id, {
      log: build.log,
      functions: build.functions.map((f) => f.name),
      now,
    });
    return { emptyBuild: false };
  }
  try {
    await transact([
      ...sessionClosing(session, now, 'failed'),
      deploymentFailed(session.project_id, session.deployment_id, now, build.log),
    ]);
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    const closed = await closedSession(session.upload_id);
    if (closed) return { settled: closed };
    throw error;
  }
  // Recorded once, by the call that failed the deployment; a repeated finalize only answers with the log.
  await recordDeployFailure(session.team_id, 'FUNCTIONS_BUILD_FAILED');
  throw buildFailed(build.log);
}
