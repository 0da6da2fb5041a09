import { TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT } from '../errors/catalogue/request.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { planOf } from '../plans.ts';
import { projectIsActive, type ProjectItem } from '../projects/records.ts';
import { teamInGoodStanding } from '../teams/standing-check.ts';
import { checkFiles, prepareSession, refuseSuspended, sessionOpening, type TeamStanding, type UploadSessionRecord } from './sessions.ts';
import { buildOutputSession } from '../deployments/records.ts';

/**
 * The upload session of a build's output (lib/builds/publish-output.ts): a
 * build hands its output folder to the same steps as a direct upload. Its
 * manifest is checked the same way (manifest rules, publishability, the
 * plan's allowance), `missing` narrows to what the team does not hold, and
 * its finalize is the same. It differs in three ways: the deployment exists
 * already (the build's, `building`), the session takes no place among the
 * team's open upload sessions, and it says whether it publishes production or
 * a preview.
 */
export async function beginBuildSession(input: {
  team: TeamStanding;
  project: ProjectItem;
  deploymentId: string;
  files: unknown;
  target: 'production' | 'preview';
  branch: string | null;
}): Promise<{ session: UploadSessionRecord; missing: string[] }> {
  refuseSuspended(input.team);
  const manifest = checkFiles(input.files, planOf(input.team));
  const projectId = input.project.id;
  const prepared = await prepareSession({
    teamId: input.team.id,
    projectId,
    projectSlug: input.project.slug,
    liveDeploymentId: input.project.live_deployment_id,
    manifest,
    label: null,
    now: new Date(),
    admitted: Promise.resolve(),
    deploymentId: input.deploymentId,
  });
  const session: UploadSessionRecord = { ...prepared.record, target: input.target, branch: input.branch, holds_slot: false };
  try {
    await transact([
      teamInGoodStanding(input.team.id),
      projectIsActive(projectId, () => new ApiError(PROJECT_NOT_FOUND)),
      buildOutputSession(session),
      ...sessionOpening({ ...prepared, record: session }, null),
    ]);
  } catch (error) {
    if (!(error instanceof TransactionRefused)) throw error;
    throw new ApiError(CONFLICT, { message: 'The build was cancelled while its output was being published.' });
  }
  return { session, missing: prepared.missing };
}
