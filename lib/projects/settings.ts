import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../http/schema.ts';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import {
  CONFLICT,
  FUNCTION_HOSTNAME_TAKEN,
  PREVIEW_SLUG_TAKEN,
  PRIMARY_DOMAIN_NOT_IN_PROJECT,
  PRIMARY_DOMAIN_NOT_VERIFIED,
  PRIMARY_DOMAIN_REMOVED,
  PROJECT_NAME_TAKEN,
  PROJECT_NOT_FOUND,
  PROJECT_SLUG_IMMUTABLE,
  SUBDOMAIN_INVALID,
  SUBDOMAIN_RESERVED,
  SUBDOMAIN_TAKEN,
} from '../errors/catalogue.ts';
import {
  FRAMEWORKS,
  GIT_AUTH_MODES,
  PACKAGE_MANAGERS,
  PLATFORM_URL_MODES,
  PREVIEW_BRANCH_MODES,
  toProject,
  type Project,
} from './projects.ts';
import { subdomainProblem, suggestSubdomains } from './subdomain.ts';
import { conditionFailedAt, isTransactionCanceled } from '../db/errors.ts';
import { deleteProjectAnalytics } from '../sites/analytics.ts';
import { getDomainItem } from '../domains/domains.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { hostClaimMoves, releaseProjectHosts } from '../functions/host-claims.ts';
import { logger } from '../logger.ts';
import { gitSettingsChanges } from '../builds/git-settings.ts';

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

const WRITABLE = [
  'framework',
  'build_command',
  'output_dir',
  'root_directory',
  'package_manager',
  'default_branch',
  'git_provider',
  'git_repo_url',
  'git_connection_id',
  'git_auth_mode',
  'forge_audience',
  'auto_deploy_enabled',
  'mr_previews_enabled',
  'preview_branch_mode',
  'preview_branch_include',
  'preview_branch_exclude',
  'platform_url_mode',
  'analytics_enabled',
] as const;

/**
 * Why a domain cannot be the project's primary domain, or null when it can: a
 * domain of this project (an unknown id or another project's domain is not),
 * not removed, verified.
 */
function primaryDomainProblem(domain: Record<string, unknown> | null, projectId: string): ApiError | null {
  if (!domain || domain.project_id !== projectId) return new ApiError(PRIMARY_DOMAIN_NOT_IN_PROJECT);
  if (domain.deleted_at) return new ApiError(PRIMARY_DOMAIN_REMOVED, { details: { domain_id: domain.id } });
  if (domain.status !== 'verified') {
    return new ApiError(PRIMARY_DOMAIN_NOT_VERIFIED, { details: { domain_id: domain.id, status: domain.status } });
  }
  return null;
}

async function readPrimaryCandidate(id: string): Promise<Record<string, unknown> | null> {
  return UUID_PATTERN.test(id) ? getDomainItem(id.toLowerCase()) : null;
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
export async function updateProjectSettings(item: Record<string, unknown>, changes: ProjectSettings): Promise<Project> {
  if (changes.slug !== undefined && changes.slug !== item.slug) {
    throw new ApiError(PROJECT_SLUG_IMMUTABLE, { details: { slug: item.slug } });
  }
  if (item.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);
  const table = config.tableName();
  const projectId = item.id as string;
  const teamId = item.team_id as string;
  const now = new Date().toISOString();

  const set: string[] = ['updated_at = :now'];
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ':now': now, ':active': 'active' };
  const conditions = ['#status = :active'];
  WRITABLE.forEach((field, i) => {
    if (changes[field] === undefined) return;
    names[`#f${i}`] = field;
    values[`:f${i}`] = field === 'git_auth_mode' && changes[field] === '' ? null : changes[field];
    set.push(`#f${i} = :f${i}`);
  });
  if (changes.default_branch !== undefined && changes.default_branch !== item.default_branch) {
    // A new production branch is not known to be deleted.
    set.push('production_branch_deleted_at = :null');
    values[':null'] = null;
  }

  const extra: object[] = [];
  const git = gitSettingsChanges(item, changes);
  set.push(...git.set);
  Object.assign(values, git.values);
  const newName = changes.name !== undefined && changes.name !== item.name ? changes.name : undefined;
  if (newName !== undefined) {
    names['#name'] = 'name';
    values[':name'] = newName;
    values[':oldName'] = item.name;
    set.push('#name = :name');
    conditions.push('#name = :oldName');
    extra.push({
      Put: {
        TableName: table,
        Item: { ...keys.projectName(teamId, newName), type: 'project_name', name: newName, project_id: projectId, team_id: teamId },
        ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
        ExpressionAttributeValues: { ':project': projectId },
      },
    });
    if (newName.toLowerCase() !== (item.name as string).toLowerCase()) {
      extra.push({
        Delete: {
          TableName: table,
          Key: keys.projectName(teamId, item.name as string),
          ConditionExpression: 'attribute_not_exists(pk) OR project_id = :project',
          ExpressionAttributeValues: { ':project': projectId },
        },
      });
    }
  }
  const requestedSubdomain = changes.subdomain?.trim().toLowerCase();
  const newSubdomain = requestedSubdomain !== undefined && requestedSubdomain !== item.subdomain ? requestedSubdomain : undefined;
  let subdomainIndex = -1;
  if (newSubdomain !== undefined) {
    const problem = subdomainProblem(newSubdomain);
    if (problem) {
      throw new ApiError(problem === 'invalid' ? SUBDOMAIN_INVALID : SUBDOMAIN_RESERVED, {
        details: { subdomain: changes.subdomain, suggestions: await suggestSubdomains(newSubdomain, item.name as string) },
      });
    }
    values[':subdomain'] = newSubdomain;
    values[':oldSubdomain'] = item.subdomain;
    set.push('subdomain = :subdomain');
    conditions.push('subdomain = :oldSubdomain');
    subdomainIndex = 1 + extra.length;
    extra.push(
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.subdomainHold(newSubdomain),
            type: 'subdomain_hold',
            subdomain: newSubdomain,
            project_id: projectId,
            team_id: teamId,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Delete: {
          TableName: table,
          Key: keys.subdomainHold(item.subdomain as string),
          ConditionExpression: 'project_id = :project',
          ExpressionAttributeValues: { ':project': projectId },
        },
      },
    );
  }

  const currentPrimary = (item.primary_domain_id as string | null | undefined) ?? null;
  const requestedPrimary = changes.primary_domain_id === undefined ? undefined : changes.primary_domain_id?.trim().toLowerCase() || null;
  let primaryIndex = -1;
  let primaryId: string | null = null;
  if (requestedPrimary !== undefined && requestedPrimary !== currentPrimary) {
    if (requestedPrimary === null) {
      set.push('primary_domain_id = :primaryNone', 'primary_domain_hostname = :primaryNone');
      values[':primaryNone'] = null;
    } else {
      const domain = await readPrimaryCandidate(requestedPrimary);
      const problem = primaryDomainProblem(domain, projectId);
      if (problem) throw problem;
      primaryId = domain!.id as string;
      set.push('primary_domain_id = :primaryId', 'primary_domain_hostname = :primaryHost');
      values[':primaryId'] = primaryId;
      values[':primaryHost'] = domain!.domain;
      // A removal or anything else racing this save: the domain must still qualify when the project is written.
      primaryIndex = 1 + extra.length;
      extra.push({
        ConditionCheck: {
          TableName: table,
          Key: keys.domain(primaryId),
          ConditionExpression: 'project_id = :project AND #domainStatus = :verified AND attribute_type(deleted_at, :nullType)',
          ExpressionAttributeNames: { '#domainStatus': 'status' },
          ExpressionAttributeValues: { ':project': projectId, ':verified': 'verified', ':nullType': 'NULL' },
        },
      });
    }
  }
  // The function hostnames move with the subdomain, in the same transaction (lib/functions/host-claims.ts).
  const room = MAX_TRANSACTION_ITEMS - 1 - extra.length - git.slugItems.length;
  const hostMoves = newSubdomain === undefined ? null : await hostClaimMoves(projectId, item.subdomain as string, newSubdomain, room);
  const hostIndex = 1 + extra.length;
  if (hostMoves) extra.push(...hostMoves.items);
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: keys.project(projectId),
              UpdateExpression: `SET ${set.join(', ')}${git.remove.length > 0 ? ` REMOVE ${git.remove.join(', ')}` : ''}`,
              ConditionExpression: conditions.join(' AND '),
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: values,
            },
          },
          ...(extra as never[]),
          ...(git.slugItems as never[]),
        ],
      }),
    );
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    if (primaryId !== null && conditionFailedAt(error, primaryIndex)) {
      throw (
        primaryDomainProblem(await readPrimaryCandidate(primaryId), projectId) ??
        new ApiError(CONFLICT, { message: 'The domain changed while this request ran. Reload and try again.' })
      );
    }
    if (newName !== undefined && conditionFailedAt(error, 1)) throw new ApiError(PROJECT_NAME_TAKEN, { details: { name: newName } });
    if (git.slugItems.length > 0 && conditionFailedAt(error, 1 + extra.length)) {
      throw new ApiError(PREVIEW_SLUG_TAKEN, { details: { preview_slug: changes.preview_slug } });
    }
    if (newSubdomain !== undefined && conditionFailedAt(error, subdomainIndex)) {
      throw new ApiError(SUBDOMAIN_TAKEN, {
        details: { subdomain: newSubdomain, suggestions: await suggestSubdomains(newSubdomain, item.name as string) },
      });
    }
    const taken = hostMoves?.claims.filter((_, i) => conditionFailedAt(error, hostIndex + i)).map((c) => c.label) ?? [];
    if (taken.length > 0) throw new ApiError(FUNCTION_HOSTNAME_TAKEN, { details: { subdomain: newSubdomain, labels: taken } });
    if (conditionFailedAt(error, 0)) {
      const current = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(projectId), ConsistentRead: true }))).Item;
      if (!current || current.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);
      throw new ApiError(CONFLICT, { message: 'The project changed while this request ran. Reload and try again.' });
    }
    throw error;
  }
  if (hostMoves) {
    // Claims on subdomains the project left before claims moved with it (older code kept them): free them too.
    await releaseProjectHosts(projectId, new Set(hostMoves.claims.map((c) => c.label))).catch((error: unknown) =>
      logger.warn('stale function host claims not released', { project_id: projectId, error: (error as Error).message }),
    );
  }
  // Off means no data kept: the rows go after the flag is down, so no flush can write them back (lib/sites/analytics.ts).
  // Saving `false` again deletes again, which finishes a deletion an earlier failure left half done.
  if (changes.analytics_enabled === false) await deleteProjectAnalytics(projectId);
  const updated = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(projectId), ConsistentRead: true }))).Item;
  if (!updated) throw new ApiError(PROJECT_NOT_FOUND);
  return toProject(updated);
}
