import * as z from '../schema.ts';
import { type NamedWrite, TransactionRefused, namedWrites, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT } from '../errors/catalogue/request.ts';
import {
  FUNCTION_HOSTNAME_TAKEN,
  PROJECT_NAME_TAKEN,
  PROJECT_NOT_FOUND,
  PROJECT_SLUG_IMMUTABLE,
  SUBDOMAIN_TAKEN,
} from '../errors/catalogue/sites.ts';
import { PRIMARY_DOMAIN_NOT_IN_PROJECT, PRIMARY_DOMAIN_NOT_VERIFIED, PRIMARY_DOMAIN_REMOVED } from '../errors/catalogue/domains.ts';
import { PREVIEW_SLUG_TAKEN } from '../errors/catalogue/builds.ts';
import {
  FRAMEWORKS,
  GIT_AUTH_MODES,
  PACKAGE_MANAGERS,
  PLATFORM_URL_MODES,
  PREVIEW_BRANCH_MODES,
  SETTINGS_FIELDS,
  toProject,
  type Project,
} from '../projects/projects.ts';
import { acceptableSubdomain, suggestSubdomains } from '../projects/subdomain.ts';
import { getProjectItem, type ProjectItem } from '../projects/records.ts';
import { moveNameHold, moveSubdomainHold, saveSettings, type SettingsUpdate } from '../projects/settings-records.ts';
import { domainQualifiesAsPrimary, getDomainItem, type DomainItem } from '../domains/records.ts';
import { deleteProjectAnalytics } from '../sites/analytics-records.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { hostnameClaimMoves, releaseProjectHostnames } from '../functions/hostname-claim-records.ts';
import { logger } from '../logger.ts';
import { gitSettingsChanges } from '../git/git-settings.ts';
import { forgeAudienceWrites } from '../git/forge-audiences.ts';

/** DynamoDB's limit of items in one transaction. */
const MAX_TRANSACTION_ITEMS = 100;

const optionalText = (max: number) => z.nullable(z.string().check(z.maxLength(max)));
const branchPatterns = z.array(z.string().check(z.minLength(1), z.maxLength(255))).check(z.maxLength(100));

/**
 * Fields a settings save may carry but never writes: system state (the
 * auto-deploy breaker, live deployment, provisional state), provenance and
 * fields other operations own (domains, previews, CDN). They are accepted and
 * ignored so a client saving the whole project object back cannot write a
 * stale value, e.g. a stale pause state.
 */
const READ_ONLY_FIELDS = [
  'id',
  'team_id',
  'production_url',
  'status',
  'repo_default_branch',
  'auto_deploy_paused_at',
  'auto_deploy_pause_reason',
  'consecutive_build_failures',
  'last_build_failure_message',
  'production_branch_deleted_at',
  'live_deployment_id',
  'cdn_pull_zone_id',
  'cdn_edge_rule_guid',
  'cdn_not_found_edge_rule_guid',
  'provisional_until',
  'created_via',
  'created_client',
  'created_at',
  'updated_at',
] as const;

export const projectSettingsSchema = z.partial(
  z.strictObject({
    name: z.string().check(
      z.minLength(1),
      z.maxLength(255),
      z.refine((n) => n.trim().length > 0, { message: 'The name must not be blank.' }),
    ),
    subdomain: z.string().check(z.maxLength(255)),
    // Immutable: equal to the current slug is accepted (a whole-object save), anything else is refused.
    slug: z.string().check(z.maxLength(255)),
    framework: z.enum(FRAMEWORKS),
    build_command: optionalText(1024),
    output_dir: optionalText(1024),
    root_directory: optionalText(1024),
    package_manager: z.nullable(z.enum(PACKAGE_MANAGERS)),
    default_branch: z.nullable(z.string().check(z.minLength(1), z.maxLength(255))),
    git_provider: optionalText(64),
    git_repo_url: z.nullable(z.string().check(z.url(), z.maxLength(2048))),
    git_connection_id: optionalText(255),
    // The spec treats an empty mode as `pat`.
    git_auth_mode: z.nullable(z.union([z.enum(GIT_AUTH_MODES), z.literal('')])),
    forge_audience: optionalText(1024),
    auto_deploy_enabled: z.boolean(),
    mr_previews_enabled: z.boolean(),
    preview_branch_mode: z.enum(PREVIEW_BRANCH_MODES),
    preview_branch_include: branchPatterns,
    preview_branch_exclude: branchPatterns,
    platform_url_mode: z.enum(PLATFORM_URL_MODES),
    // A domain id, checked against the table (PRIMARY_DOMAIN_* codes); null clears it.
    primary_domain_id: z.nullable(z.string().check(z.maxLength(255))),
    analytics_enabled: z.boolean(),
    // Write-only: sealed at rest, never returned; null clears it (lib/builds/git-settings.ts).
    git_access_token: z.nullable(z.string().check(z.minLength(1), z.maxLength(4096))),
    // Checked against PREVIEW_SLUG_PATTERN (PREVIEW_SLUG_INVALID); platform-wide unique (PREVIEW_SLUG_TAKEN).
    // Null changes nothing (a whole-object save of a project that has no slug yet): a slug is never removed.
    preview_slug: z.nullable(z.string().check(z.maxLength(255))),
    ...Object.fromEntries(READ_ONLY_FIELDS.map((f) => [f, z.unknown()])),
  }),
);

export type ProjectSettings = z.infer<typeof projectSettingsSchema>;

/**
 * Why a domain cannot be the project's primary domain, or null when it can: a
 * domain of this project (an unknown id or another project's domain is not),
 * not removed, verified.
 */
function primaryDomainProblem(domain: DomainItem | null, projectId: string): ApiError | null {
  if (!domain || domain.project_id !== projectId) return new ApiError(PRIMARY_DOMAIN_NOT_IN_PROJECT);
  if (domain.deleted_at) return new ApiError(PRIMARY_DOMAIN_REMOVED, { details: { domain_id: domain.id } });
  if (domain.status !== 'verified') {
    return new ApiError(PRIMARY_DOMAIN_NOT_VERIFIED, { details: { domain_id: domain.id, status: domain.status } });
  }
  return null;
}

async function readPrimaryCandidate(id: string): Promise<DomainItem | null> {
  return UUID_PATTERN.test(id) ? getDomainItem(id.toLowerCase()) : null;
}

/** The settings fields a save assigns, beside what git settings add (repository index, sealed token, preview slug). */
function fieldAssignments(item: ProjectItem, changes: ProjectSettings, git: ReturnType<typeof gitSettingsChanges>) {
  const update: SettingsUpdate = {
    set: ['updated_at = :now', ...git.set],
    remove: git.remove,
    names: {},
    values: { ':now': new Date().toISOString(), ...git.values },
    conditions: [],
  };
  SETTINGS_FIELDS.forEach((field, i) => {
    if (changes[field] === undefined) return;
    update.names[`#f${i}`] = field;
    update.values[`:f${i}`] = field === 'git_auth_mode' && changes[field] === '' ? null : changes[field];
    update.set.push(`#f${i} = :f${i}`);
  });
  if (changes.default_branch !== undefined && changes.default_branch !== item.default_branch) {
    // A new production branch is not known to be deleted.
    update.set.push('production_branch_deleted_at = :null');
    update.values[':null'] = null;
  }
  return update;
}

/** A new name moves the team's name hold, on the condition that the name read is still the project's. */
function renameWrites(item: ProjectItem, newName: string | undefined, update: SettingsUpdate): NamedWrite[] {
  if (newName === undefined) return [];
  update.names['#name'] = 'name';
  Object.assign(update.values, { ':name': newName, ':oldName': item.name });
  update.set.push('#name = :name');
  update.conditions.push('#name = :oldName');
  return moveNameHold(item, newName);
}

/** A new subdomain moves the global subdomain hold, on the condition that the subdomain read is still the project's. */
function subdomainWrites(item: ProjectItem, newSubdomain: string | undefined, update: SettingsUpdate): NamedWrite[] {
  if (newSubdomain === undefined) return [];
  Object.assign(update.values, { ':subdomain': newSubdomain, ':oldSubdomain': item.subdomain });
  update.set.push('subdomain = :subdomain');
  update.conditions.push('subdomain = :oldSubdomain');
  return moveSubdomainHold(item, newSubdomain);
}

/**
 * A new primary domain: assigned with its hostname, and checked in the save's transaction (a removal
 * or anything else racing it: the domain must still qualify when the project is written). Null clears it.
 */
async function primaryDomainWrites(item: ProjectItem, changes: ProjectSettings, update: SettingsUpdate) {
  const projectId = item.id;
  const current = item.primary_domain_id ?? null;
  const requested = changes.primary_domain_id === undefined ? undefined : changes.primary_domain_id?.trim().toLowerCase() || null;
  if (requested === undefined || requested === current) return { primaryId: null, writes: [] };
  if (requested === null) {
    update.set.push('primary_domain_id = :primaryNone', 'primary_domain_hostname = :primaryNone');
    update.values[':primaryNone'] = null;
    return { primaryId: null, writes: [] };
  }
  const domain = await readPrimaryCandidate(requested);
  const problem = primaryDomainProblem(domain, projectId);
  if (problem) throw problem;
  const primaryId = domain!.id;
  update.set.push('primary_domain_id = :primaryId', 'primary_domain_hostname = :primaryHost');
  Object.assign(update.values, { ':primaryId': primaryId, ':primaryHost': domain!.domain });
  return { primaryId, writes: [domainQualifiesAsPrimary(primaryId, projectId)] };
}

/** What a cancelled save means, in the order a client can act on it. */
async function saveRefusal(
  error: unknown,
  item: ProjectItem,
  save: { newName?: string; newSubdomain?: string; primaryId: string | null; previewSlug: unknown; hostLabels: string[] },
): Promise<unknown> {
  if (!(error instanceof TransactionRefused)) return error;
  const projectId = item.id;
  if (save.primaryId !== null && error.failed.has('primary_domain')) {
    return (
      primaryDomainProblem(await readPrimaryCandidate(save.primaryId), projectId) ??
      new ApiError(CONFLICT, { message: 'The domain changed while this request ran. Reload and try again.' })
    );
  }
  if (error.failed.has('name')) return new ApiError(PROJECT_NAME_TAKEN, { details: { name: save.newName } });
  if (error.failed.has('preview_slug0')) return new ApiError(PREVIEW_SLUG_TAKEN, { details: { preview_slug: save.previewSlug } });
  if (save.newSubdomain !== undefined && error.failed.has('subdomain')) {
    return new ApiError(SUBDOMAIN_TAKEN, {
      details: { subdomain: save.newSubdomain, suggestions: await suggestSubdomains(save.newSubdomain, item.name) },
    });
  }
  const taken = save.hostLabels.filter((_, i) => error.failed.has(`host${i}`));
  if (taken.length > 0) return new ApiError(FUNCTION_HOSTNAME_TAKEN, { details: { subdomain: save.newSubdomain, labels: taken } });
  if (error.failed.has('project')) {
    const current = await getProjectItem(projectId, true);
    if (!current || current.status !== 'active') return new ApiError(PROJECT_NOT_FOUND);
    return new ApiError(CONFLICT, { message: 'The project changed while this request ran. Reload and try again.' });
  }
  return error;
}

/** What follows a committed save: stale function host claims freed, analytics rows dropped when it is turned off. */
async function afterSave(projectId: string, changes: ProjectSettings, movedLabels: string[] | null): Promise<void> {
  if (movedLabels) {
    // Claims on subdomains the project left before claims moved with it (older code kept them): free them too.
    await releaseProjectHostnames(projectId, new Set(movedLabels)).catch((error: unknown) =>
      logger.warn('stale function host claims not released', { project_id: projectId, error: (error as Error).message }),
    );
  }
  // Off means no data kept: the rows go after the flag is down, so no flush can write them back (lib/sites/analytics.ts).
  // Saving `false` again deletes again, which finishes a deletion an earlier failure left half done.
  if (changes.analytics_enabled === false) await deleteProjectAnalytics(projectId);
}

/**
 * PATCH /api/v1/projects/{id}: writes settings only. A new name moves the
 * team's name hold and a new subdomain moves the global subdomain hold, in the
 * same transaction as the project, conditional on the values read, so two
 * saves cannot both claim one name or address. A new `primary_domain_id` is
 * written with a condition check on the domain (this project's, verified, not
 * removed) in the same transaction, and a domain's removal clears it in its
 * own (lib/domains/domains.ts), so a primary domain is never a removed one.
 * The project also keeps the primary's hostname (`primary_domain_hostname`,
 * internal): serving redirects to it without reading the domain.
 */
export async function updateProjectSettings(item: ProjectItem, changes: ProjectSettings): Promise<Project> {
  if (changes.slug !== undefined && changes.slug !== item.slug) {
    throw new ApiError(PROJECT_SLUG_IMMUTABLE, { details: { slug: item.slug } });
  }
  if (item.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);
  const projectId = item.id;
  const git = gitSettingsChanges(item, changes);
  const update = fieldAssignments(item, changes, git);
  const newName = changes.name !== undefined && changes.name !== item.name ? changes.name : undefined;
  const asked = changes.subdomain?.trim().toLowerCase();
  const newSubdomain =
    asked !== undefined && asked !== item.subdomain ? await acceptableSubdomain(changes.subdomain!, item.name) : undefined;
  const writes = [...renameWrites(item, newName, update), ...subdomainWrites(item, newSubdomain, update)];
  const primary = await primaryDomainWrites(item, changes, update);
  writes.push(...primary.writes);
  // The function hostnames move with the subdomain, in the same transaction (lib/functions/hostname-claim-records.ts).
  const audienceChecks = forgeAudienceWrites(item.team_id, changes.forge_audience);
  const room = MAX_TRANSACTION_ITEMS - 1 - writes.length - git.slugItems.length - audienceChecks.length;
  const hostMoves = newSubdomain === undefined ? null : await hostnameClaimMoves(projectId, item.subdomain, newSubdomain, room);
  const hostLabels = hostMoves?.claims.map((c) => c.label) ?? [];
  try {
    await transact([
      saveSettings(projectId, update),
      ...writes,
      ...namedWrites('preview_slug', git.slugItems),
      ...namedWrites('host', hostMoves?.items ?? []),
      // A named forge audience must be the team's (FORGE_AUDIENCE_NOT_REGISTERED), checked in the same transaction.
      ...audienceChecks,
    ]);
  } catch (error) {
    throw await saveRefusal(error, item, {
      newName,
      newSubdomain,
      primaryId: primary.primaryId,
      previewSlug: changes.preview_slug,
      hostLabels,
    });
  }
  await afterSave(projectId, changes, hostMoves ? hostLabels : null);
  const updated = await getProjectItem(projectId, true);
  if (!updated) throw new ApiError(PROJECT_NOT_FOUND);
  return toProject(updated);
}
