import type { Principal, TeamAccess } from '../http/authorize.ts';
import { ApiError } from '../http/errors.ts';
import { loadEnvProject, type EnvProject } from './project.ts';

/**
 * Loads the addressed project, then applies the route's team rule to the
 * project's team: 404 for an unknown project, 403 for a caller outside its
 * team or below the role.
 */
export async function authorizeEnvProject(
  projectId: string,
  authorizeTeam: (idOrSlug: string) => Promise<TeamAccess>,
): Promise<{ project: EnvProject; access: TeamAccess }> {
  const project = await loadEnvProject(projectId);
  if (!project) throw new ApiError('NOT_FOUND', { message: 'Project not found.' });
  return { project, access: await authorizeTeam(project.team_id) };
}

/** Who wrote a variable: the user, or the API key (which names no person). */
export const writerOf = (principal: Principal | null) => (principal?.user ? `user:${principal.user.user_id}` : 'api_key');
