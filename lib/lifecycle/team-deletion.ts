import { deleteOneTimeSchedule, setOneTimeSchedule } from '../aws/schedules.ts';
import { batchWriteAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT } from '../errors/catalogue/request.ts';
import { TEAM_NOT_FOUND } from '../errors/catalogue/accounts.ts';
import { removeProject } from './project-deletion.ts';
import { forceDeleting, getProjectItem, teamProjectItems } from '../projects/records.ts';
import {
  claimPurge,
  clearPendingDeletion,
  functionStatsKeys,
  getTeamItem,
  markPendingDeletion,
  pendingDeletionItems,
  teamPartitionKeys,
  writeLegalHold,
  type TeamItem,
} from '../teams/records.ts';
import { deleteTeamCredentials } from '../identity/credential-records.ts';
import { config } from '../config.ts';

/**
 * A team's deletion (spec: Team deletion and legal hold). The owner asks for
 * it: the team is `pending_deletion` with a purge deadline (`purge_after`), and
 * a one-time schedule wakes the purge worker then. A platform administrator's
 * legal hold blocks the purge: the worker never claims a held team, and a held
 * team past its deadline is listed as overdue in the deletions queue. Lifting
 * the hold of an overdue team wakes the worker at once.
 *
 * Every state change is one conditional write; the purge claims the team with
 * one (`pending_deletion`, not held, deadline passed -> `purging`), so a hold
 * set at the same moment either lands first (no purge) or finds it purging.
 */

export const TEAM_PURGE_TARGET_ARN_ENV = 'TEAM_PURGE_TARGET_ARN';
/** Seconds from the request to the purge: 30 days, or `TEAM_PURGE_DELAY_SECONDS` (tests). */
export const teamPurgeDelaySeconds = () => config.teamPurgeDelaySeconds();

export const teamPurgeScheduleName = (teamId: string) => `team-purge-${teamId}`;

export interface TeamPurgeInput {
  team_id: string;
}

export interface TeamDeletionState {
  team_id: string;
  status: 'active' | 'pending_deletion' | 'purging';
  deletion_requested_at: string | null;
  purge_after: string | null;
  legal_hold: boolean;
}

function stateOf(item: TeamItem): TeamDeletionState {
  return {
    team_id: item.id,
    status: item.status ?? 'active',
    deletion_requested_at: item.deletion_requested_at ?? null,
    purge_after: item.purge_after ?? null,
    legal_hold: item.legal_hold === true,
  };
}

const teamItem = (teamId: string) => getTeamItem(teamId, true);

/** The owner's request: `pending_deletion` until `purge_after`. Asking again keeps the first deadline. */
export async function requestTeamDeletion(teamId: string, userId: string, now = new Date()): Promise<TeamDeletionState> {
  const purgeAfter = new Date(now.getTime() + teamPurgeDelaySeconds() * 1000).toISOString();
  if (!(await markPendingDeletion(teamId, userId, now, purgeAfter))) {
    const item = await teamItem(teamId);
    if (!item) throw new ApiError(TEAM_NOT_FOUND);
    // Already pending: the first request's deadline stands.
    if (item.status === 'pending_deletion') return stateOf(item);
    throw new ApiError(CONFLICT, { message: 'The team is being purged.' });
  }
  await setOneTimeSchedule(teamPurgeScheduleName(teamId), new Date(purgeAfter), TEAM_PURGE_TARGET_ARN_ENV, {
    team_id: teamId,
  } satisfies TeamPurgeInput);
  return stateOf((await teamItem(teamId))!);
}

/** The owner takes the request back before the purge started. */
export async function cancelTeamDeletion(teamId: string, now = new Date()): Promise<TeamDeletionState> {
  if (!(await clearPendingDeletion(teamId, now))) {
    const item = await teamItem(teamId);
    if (!item) throw new ApiError(TEAM_NOT_FOUND);
    throw new ApiError(CONFLICT, {
      message: item.status === 'purging' ? 'The team is being purged.' : 'The team has no deletion request to cancel.',
    });
  }
  await deleteOneTimeSchedule(teamPurgeScheduleName(teamId));
  return stateOf((await teamItem(teamId))!);
}

/** POST /api/v1/admin/teams/{id}/legal-hold: sets or clears the block on the purge. */
export async function setLegalHold(
  teamId: string,
  hold: boolean,
  adminUserId: string,
  now = new Date(),
): Promise<TeamDeletionState & { legal_hold_set_at: string; legal_hold_set_by: string }> {
  const item = await writeLegalHold(teamId, hold, adminUserId, now);
  if (!item) {
    if (!(await teamItem(teamId))) throw new ApiError(TEAM_NOT_FOUND);
    throw new ApiError(CONFLICT, { message: 'The team is being purged.' });
  }
  // Lifted on a team past its deadline: the purge it missed runs now.
  if (
    !hold &&
    item.status === 'pending_deletion' &&
    typeof item.purge_after === 'string' &&
    Date.parse(item.purge_after) <= now.getTime()
  ) {
    await setOneTimeSchedule(teamPurgeScheduleName(teamId), now, TEAM_PURGE_TARGET_ARN_ENV, { team_id: teamId } satisfies TeamPurgeInput);
  }
  return { ...stateOf(item), legal_hold_set_at: item.legal_hold_set_at, legal_hold_set_by: item.legal_hold_set_by };
}

export interface PendingDeletion {
  team_id: string;
  team_name: string;
  deletion_requested_at: string;
  purge_after: string;
  legal_hold: boolean;
  /** Past its deadline and still here: held, or the purge has not run yet. */
  overdue: boolean;
}

/** GET /api/v1/admin/deletions: teams pending deletion, earliest deadline first (one index query). */
export async function listPendingDeletions(now = new Date()): Promise<PendingDeletion[]> {
  const items = await pendingDeletionItems();
  return items.map((item) => ({
    team_id: item.id,
    team_name: item.name,
    deletion_requested_at: item.deletion_requested_at,
    purge_after: item.purge_after,
    legal_hold: item.legal_hold === true,
    overdue: Date.parse(item.purge_after) <= now.getTime(),
  }));
}

export type PurgeOutcome = 'purged' | 'held' | 'early' | 'kept' | 'gone';

/**
 * The purge worker's job: deletes a team past its deadline that is not held,
 * with its projects (as a deleted project is removed), memberships,
 * invitations, feedback, counters, functions telemetry, forge audiences and
 * slug, then the team.
 */
export async function purgeTeam(teamId: string, now = new Date()): Promise<PurgeOutcome> {
  const item = await teamItem(teamId);
  if (!item) return 'gone';
  if (item.status === 'pending_deletion') {
    if (item.legal_hold === true) return 'held';
    if (typeof item.purge_after !== 'string' || Date.parse(item.purge_after) > now.getTime()) return 'early';
    if (!(await claimPurge(teamId, now))) return 'held';
  } else if (item.status !== 'purging') {
    return 'kept';
  }
  // From here the team is ours to delete; a retry after a crash resumes at this point.
  // Its API keys and the sessions opened for it go first: nothing acts in a team being purged.
  await deleteTeamCredentials(teamId);
  for (const listed of await teamProjectItems(teamId)) {
    const project = await getProjectItem(listed.id, true);
    if (!project) continue;
    if (project.status !== 'deleting') await forceDeleting(listed.id, now);
    await removeProject(project);
  }
  const owned = await teamPartitionKeys(teamId);
  const stats = await functionStatsKeys(teamId);
  const gone = [
    ...owned.filter((o) => o.sk !== 'TEAM'),
    // Each feedback's reference by id (lib/privacy/records.ts createFeedback) lives outside the team's partition.
    ...owned.filter((o) => o.sk.startsWith('FEEDBACK#')).map((o) => keys.feedbackRef(o.sk.slice('FEEDBACK#'.length))),
    // So does each forge audience's platform-wide claim (lib/git/forge-audiences.ts): released with the team.
    ...owned.filter((o) => o.sk.startsWith('FORGEAUDIENCE#')).map((o) => keys.forgeAudience(o.sk.slice('FORGEAUDIENCE#'.length))),
    ...stats,
    ...(typeof item.slug === 'string' ? [keys.teamSlug(item.slug)] : []),
  ].map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } }));
  await batchWriteAll(gone);
  // The team item last: until it goes, a retry finds the team `purging` and finishes the job.
  await batchWriteAll([{ DeleteRequest: { Key: keys.team(teamId) } }]);
  await deleteOneTimeSchedule(teamPurgeScheduleName(teamId)).catch(() => undefined);
  return 'purged';
}
