import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { conditionFailedAt, isTransactionCanceled } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import {
  CONFLICT,
  PLAN_LIMIT_EXCEEDED,
  PROJECT_NAME_TAKEN,
  SUBDOMAIN_INVALID,
  SUBDOMAIN_RESERVED,
  SUBDOMAIN_TAKEN,
  TEAM_SUSPENDED,
} from '../errors/catalogue.ts';
import * as z from '../http/schema.ts';
import { planOf, type Plan } from '../plans.ts';
import { gitSettingsChanges } from '../builds/git-settings.ts';
import { CREATED_CLIENTS, newProjectRecord, projectItem, toProject, type Project, type ProjectRecord } from './projects.ts';
import { projectSettingsSchema } from './settings.ts';
import { randomSuffix, subdomainFrom, subdomainProblem, suggestSubdomains, withSuffix } from './subdomain.ts';

/**
 * The items every new project is written with, in one transaction (begin-upload's and
 * POST /api/v1/projects'): the team not suspended, the plan's site count, the global subdomain
 * hold, the team's name hold, the project. Their order is what callers read a cancellation by.
 */
export function newProjectItems(teamId: string, plan: Plan, record: ProjectRecord, item: Record<string, unknown> = projectItem(record)) {
  const table = config.tableName();
  return [
    {
      ConditionCheck: {
        TableName: table,
        Key: keys.team(teamId),
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(suspended_at) OR suspended_at = :null)',
        ExpressionAttributeValues: { ':null': null },
      },
    },
    {
      Update: {
        TableName: table,
        Key: keys.teamProjectCount(teamId),
        UpdateExpression: 'SET project_count = if_not_exists(project_count, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(project_count) OR project_count < :limit',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':limit': plan.siteLimit },
      },
    },
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.subdomainHold(record.subdomain),
          type: 'subdomain_hold',
          subdomain: record.subdomain,
          project_id: record.id,
          team_id: teamId,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.projectName(teamId, record.name), type: 'project_name', name: record.name, project_id: record.id, team_id: teamId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Put: { TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
}

/** The refusal a cancelled creation means, by which of newProjectItems' conditions failed (null: none of them). */
export function creationRefusal(error: unknown, plan: Plan, name: string): ApiError | null {
  if (conditionFailedAt(error, 0)) return new ApiError(TEAM_SUSPENDED);
  if (conditionFailedAt(error, 1)) {
    return new ApiError(PLAN_LIMIT_EXCEEDED, {
      message: `The ${plan.name} plan allows ${plan.siteLimit} sites; this team has reached it.`,
      details: { limit: 'sites', plan: plan.name, max_sites: plan.siteLimit },
    });
  }
  if (conditionFailedAt(error, 3)) return new ApiError(PROJECT_NAME_TAKEN, { details: { name } });
  return null;
}

const SETTINGS_ON_CREATE = [
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
  'git_access_token',
] as const;

/** The body of POST /api/v1/projects: begin-upload's `name` and `subdomain`, and the settings a save may write. */
export const createProjectSchema = z.extend(
  z.pick(
    projectSettingsSchema,
    Object.fromEntries(SETTINGS_ON_CREATE.map((f) => [f, true])) as { [K in (typeof SETTINGS_ON_CREATE)[number]]: true },
  ),
  {
    name: z.string().check(
      z.minLength(1),
      z.maxLength(255),
      z.refine((n) => n.trim().length > 0, { message: 'The name must not be blank.' }),
    ),
    subdomain: z.optional(z.nullable(z.string().check(z.maxLength(255)))),
  },
);
export type CreateProjectBody = z.infer<typeof createProjectSchema>;

async function requestedSubdomain(body: CreateProjectBody): Promise<string | null> {
  const requested = body.subdomain == null ? null : body.subdomain.trim().toLowerCase();
  if (requested === null) return null;
  const problem = subdomainProblem(requested);
  if (problem) {
    throw new ApiError(problem === 'invalid' ? SUBDOMAIN_INVALID : SUBDOMAIN_RESERVED, {
      details: { subdomain: body.subdomain, suggestions: await suggestSubdomains(requested, body.name) },
    });
  }
  return requested;
}

/** The record of a project made by POST /api/v1/projects: not provisional, its settings as given. */
function createdRecord(
  team: { id: string },
  body: CreateProjectBody,
  subdomain: string,
  caller: { kind: 'session' | 'api_key'; client?: string },
) {
  const client = caller.client?.trim().toLowerCase();
  const base = newProjectRecord({
    id: randomUUID(),
    teamId: team.id,
    name: body.name,
    subdomain,
    now: new Date().toISOString(),
    provisionalUntil: null,
    createdVia: caller.kind,
    createdClient: (CREATED_CLIENTS as readonly string[]).includes(client ?? '') ? (client as Project['created_client']) : null,
  });
  const { name: _n, subdomain: _s, git_access_token: _t, ...settings } = body;
  const record = { ...base, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) } as ProjectRecord;
  if ((record.git_auth_mode as string) === '') record.git_auth_mode = null;
  return record;
}

/** The project item with what git settings add (repository index, sealed token). */
function createdItem(record: ProjectRecord, body: CreateProjectBody): Record<string, unknown> {
  const git = gitSettingsChanges(record as unknown as Record<string, unknown>, {
    git_repo_url: body.git_repo_url,
    git_access_token: body.git_access_token ?? undefined,
  });
  const extra: Record<string, unknown> = {};
  for (const assignment of git.set) {
    const [field, placeholder] = assignment.split(' = ');
    extra[field!] = git.values[placeholder!];
  }
  return { ...projectItem(record), ...extra };
}

/**
 * POST /api/v1/projects: a project without an upload, typically connected to
 * a repository that builds it. Begin-upload's name and subdomain rules and
 * errors; the holds, the plan's site count and the team's standing are
 * conditions of one transaction.
 */
export async function createProject(input: {
  team: { id: string; plan?: unknown };
  body: CreateProjectBody;
  caller: { kind: 'session' | 'api_key'; client?: string };
}): Promise<Project> {
  const plan = planOf(input.team);
  const requested = await requestedSubdomain(input.body);
  let subdomain = requested ?? subdomainFrom(input.body.name);
  if (requested === null && subdomainProblem(subdomain) !== null) subdomain = withSuffix(subdomain, 'site');
  for (let attempt = 0; attempt < 10; attempt++) {
    const record = createdRecord(input.team, input.body, subdomain, input.caller);
    const item = createdItem(record, input.body);
    try {
      await dynamo().send(new TransactWriteCommand({ TransactItems: newProjectItems(input.team.id, plan, record, item) }));
      return toProject(item);
    } catch (error) {
      if (!isTransactionCanceled(error)) throw error;
      const refusal = creationRefusal(error, plan, input.body.name);
      if (refusal) throw refusal;
      if (!conditionFailedAt(error, 2)) throw new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });
      if (requested !== null)
        throw new ApiError(SUBDOMAIN_TAKEN, { details: { subdomain, suggestions: await suggestSubdomains(subdomain, input.body.name) } });
      subdomain = withSuffix(subdomainFrom(input.body.name), randomSuffix());
    }
  }
  throw new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });
}
