import type { TeamAccess } from '../identity/principal.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { authorizeResourceTeam, type ResourceContext } from '../identity/resource-access.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { getProjectItem, type ProjectItem } from './records.ts';

/** The project a path names, once the caller passed the route's rule on its team. */
export async function loadProjectForCaller(ctx: ResourceContext, projectId: string): Promise<{ item: ProjectItem; access: TeamAccess }> {
  if (!UUID_PATTERN.test(projectId)) throw new ApiError(PROJECT_NOT_FOUND);
  const item = await getProjectItem(projectId.toLowerCase(), true);
  if (!item) throw new ApiError(PROJECT_NOT_FOUND);
  const access = await authorizeResourceTeam(ctx, item.team_id, PROJECT_NOT_FOUND);
  return { item, access };
}
