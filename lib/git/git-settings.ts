import { ApiError } from '../errors/api-error.ts';
import { PREVIEW_SLUG_INVALID } from '../errors/catalogue/builds.ts';
import { keys } from '../db/keys.ts';
import { sealAccessToken } from './git-secrets.ts';
import { PREVIEW_SLUG_PATTERN } from '../sites/preview-hosts.ts';
import { previewSlugMoveItems } from '../sites/preview-records.ts';
import { repoKey } from './repo-url.ts';
import type { ProjectItem } from '../projects/records.ts';
import type { ExpressionValues } from '../db/item.ts';

/**
 * The Git parts of a settings save (PATCH /api/v1/projects/{id} and create):
 * `git_repo_url` also writes the repository index (the item's gsi2 keys, so a
 * webhook finds the project), `git_access_token` is sealed and never stored
 * as given (null removes it), and a new `preview_slug` moves its platform-wide
 * claim in the same transaction. Nothing here touches the breaker.
 */
export function gitSettingsChanges(
  item: Pick<ProjectItem, 'id' | 'team_id' | 'preview_slug'>,
  changes: { git_repo_url?: string | null; git_access_token?: string | null; preview_slug?: string | null },
): { set: string[]; remove: string[]; values: ExpressionValues; slugItems: object[] } {
  const out = { set: [] as string[], remove: [] as string[], values: {} as ExpressionValues, slugItems: [] as object[] };
  const projectId = item.id;
  if (changes.git_repo_url !== undefined) {
    const key = repoKey(changes.git_repo_url);
    if (key) {
      const index = keys.projectByRepo(key, projectId);
      out.set.push('gsi2pk = :repoPk', 'gsi2sk = :repoSk');
      Object.assign(out.values, { ':repoPk': index.gsi2pk, ':repoSk': index.gsi2sk });
    } else out.remove.push('gsi2pk', 'gsi2sk');
  }
  if (changes.git_access_token !== undefined) {
    if (changes.git_access_token === null) out.remove.push('git_access_token_sealed');
    else {
      out.set.push('git_access_token_sealed = :accessToken');
      out.values[':accessToken'] = sealAccessToken(projectId, changes.git_access_token);
    }
  }
  const slug = changes.preview_slug == null ? undefined : changes.preview_slug.trim().toLowerCase();
  if (slug !== undefined && slug !== item.preview_slug) {
    if (!PREVIEW_SLUG_PATTERN.test(slug)) throw new ApiError(PREVIEW_SLUG_INVALID, { details: { preview_slug: changes.preview_slug } });
    out.set.push('preview_slug = :previewSlug');
    out.values[':previewSlug'] = slug;
    out.slugItems.push(...previewSlugMoveItems(projectId, item.team_id, item.preview_slug ?? null, slug));
  }
  return out;
}
