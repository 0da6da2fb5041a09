import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { conditionFailedAt, isTransactionCanceled } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT, PROJECT_NOT_FOUND, TEAM_SUSPENDED } from '../errors/catalogue.ts';
import { planOf } from '../plans.ts';
import { projectActiveCheck } from '../projects/active-check.ts';
import { SESSION_RETENTION_SECONDS } from './received.ts';
import { checkFiles, prepareSession, refuseSuspended, teamNotSuspended, type TeamStanding, type UploadSessionRecord } from './sessions.ts';

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
  project: Record<string, unknown>;
  deploymentId: string;
  files: unknown;
  target: 'production' | 'preview';
  branch: string | null;
}): Promise<{ session: UploadSessionRecord; missing: string[] }> {
  refuseSuspended(input.team);
  const manifest = checkFiles(input.files, planOf(input.team));
  const projectId = input.project.id as string;
  const prepared = await prepareSession({
    teamId: input.team.id,
    projectId,
    projectSlug: input.project.slug as string,
    liveDeploymentId: input.project.live_deployment_id as string | null | undefined,
    manifest,
    label: null,
    now: new Date(),
    admitted: Promise.resolve(),
    deploymentId: input.deploymentId,
  });
  const session: UploadSessionRecord = { ...prepared.record, target: input.target, branch: input.branch, holds_slot: false };
  const table = config.tableName();
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          teamNotSuspended(input.team.id),
          projectActiveCheck(projectId),
          {
            Update: {
              TableName: table,
              Key: keys.deployment(projectId, input.deploymentId),
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
          {
            Put: {
              TableName: table,
              Item: {
                ...keys.uploadSession(session.upload_id),
                ...keys.uploadSessionByProject(projectId, session.created_at, session.upload_id),
                type: 'upload_session',
                ...session,
                ttl: prepared.expiresEpoch + SESSION_RETENTION_SECONDS,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    if (conditionFailedAt(error, 0)) throw new ApiError(TEAM_SUSPENDED);
    if (conditionFailedAt(error, 1)) throw new ApiError(PROJECT_NOT_FOUND);
    throw new ApiError(CONFLICT, { message: 'The build was cancelled while its output was being published.' });
  }
  return { session, missing: prepared.missing };
}
