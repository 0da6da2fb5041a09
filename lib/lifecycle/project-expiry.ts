import { claimExpiredProvisional, getProjectItem } from '../projects/records.ts';
import { removeProject } from './project-deletion.ts';
import { recordDeployFailure } from '../attention/team-state.ts';

export type ExpiryOutcome = 'deleted' | 'kept' | 'gone';

/**
 * The provisional-expiry worker's job: deletes a provisional project whose
 * time is up and which never published, as a deleted project is removed
 * (lib/lifecycle/project-deletion.ts).
 *
 * The project is first claimed by one conditional write (status 'deleting',
 * only while provisional_until has passed and nothing is live); finalize's own
 * write requires status 'active'. So a publish racing the expiry either lands
 * first (and the claim fails: nothing is deleted) or finds the project gone.
 */
export async function expireProvisionalProject(projectId: string, now = new Date()): Promise<ExpiryOutcome> {
  const project = await getProjectItem(projectId, true);
  if (!project) return 'gone';
  if (project.status === 'active') {
    if (!(await claimExpiredProvisional(projectId, now))) return 'kept';
    // An upload abandoned before it published: the team's latest failure, for the stuck-activation queue (once, by the claim).
    await recordDeployFailure(project.team_id, 'PROJECT_EXPIRED', now);
  } else if (project.status !== 'deleting' || !project.provisional_until) {
    return 'kept';
  }
  // From here the project is ours to delete; a retry after a crash resumes at this point.
  await removeProject(project);
  return 'deleted';
}
