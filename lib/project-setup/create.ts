import { randomUUID } from 'node:crypto';
import { type NamedWrite, TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT } from '../errors/catalogue/request.ts';
import * as z from '../schema.ts';
import { planOf, type Plan } from '../plans.ts';
import { gitSettingsChanges } from '../git/git-settings.ts';
import { forgeAudienceWrites } from '../git/forge-audiences.ts';
import { teamInGoodStanding } from '../teams/standing-check.ts';
import { CREATED_CLIENTS, SETTINGS_FIELDS, newProjectRecord, toProject, type Project, type ProjectRecord } from '../projects/projects.ts';
import { newProjectWrites, projectItem, type ProjectItem } from '../projects/records.ts';
import { projectSettingsSchema } from './settings.ts';
import { acceptableSubdomain, anotherSubdomain, subdomainOfName } from '../projects/subdomain.ts';

/**
 * The writes every new project is made with, in one transaction (begin-upload's and POST /api/v1/projects'):
 * the team not suspended, the plan's site count, the global subdomain hold (`subdomain`, which names no
 * refusal: a derived subdomain is retried), the team's name hold, the project.
 */
export function newProjectTransaction(
  teamId: string,
  plan: Plan,
  record: ProjectRecord,
  item: ProjectItem = projectItem(record),
): NamedWrite[] {
  return [teamInGoodStanding(teamId), ...newProjectWrites(teamId, plan, record, item)];
}

/** The client a project was created from, as X-Platform-Client names it (null for one the spec does not list). */
export function createdClientOf(client: string | undefined): Project['created_client'] {
  const named = client?.trim().toLowerCase();
  return (CREATED_CLIENTS as readonly string[]).includes(named ?? '') ? (named as Project['created_client']) : null;
}

/** What a create may set: every setting a save writes, and the repository's access token (sealed). */
const SETTINGS_ON_CREATE = [...SETTINGS_FIELDS, 'git_access_token'] as const;

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

/** The record of a project made by POST /api/v1/projects: not provisional, its settings as given. */
function createdRecord(
  team: { id: string },
  body: CreateProjectBody,
  subdomain: string,
  caller: { kind: 'session' | 'api_key'; client?: string },
) {
  const base = newProjectRecord({
    id: randomUUID(),
    teamId: team.id,
    name: body.name,
    subdomain,
    now: new Date().toISOString(),
    provisionalUntil: null,
    createdVia: caller.kind,
    createdClient: createdClientOf(caller.client),
  });
  const { name: _n, subdomain: _s, git_access_token: _t, ...settings } = body;
  const record = { ...base, ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) } as ProjectRecord;
  // Naming a repository is asking for its pushes to build: auto-deploy is on unless the request says otherwise.
  // It stays the user's own setting (the spec): this request, the user's, is what sets it.
  if (body.auto_deploy_enabled === undefined) record.auto_deploy_enabled = Boolean(record.git_repo_url);
  if ((record.git_auth_mode as string) === '') record.git_auth_mode = null;
  return record;
}

/** The project item with what git settings add (repository index, sealed token). */
function createdItem(record: ProjectRecord, body: CreateProjectBody): ProjectItem {
  const git = gitSettingsChanges(record, {
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
  const requested = input.body.subdomain != null;
  let subdomain = requested ? await acceptableSubdomain(input.body.subdomain!, input.body.name) : subdomainOfName(input.body.name);
  for (let attempt = 0; attempt < 10; attempt++) {
    const record = createdRecord(input.team, input.body, subdomain, input.caller);
    const item = createdItem(record, input.body);
    try {
      // A named forge audience must be the team's (FORGE_AUDIENCE_NOT_REGISTERED), checked in the same transaction.
      await transact([
        ...newProjectTransaction(input.team.id, plan, record, item),
        ...forgeAudienceWrites(input.team.id, input.body.forge_audience),
      ]);
      return toProject(item);
    } catch (error) {
      if (!(error instanceof TransactionRefused)) throw error;
      if (!error.failed.has('subdomain')) throw new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });
      subdomain = await anotherSubdomain(subdomain, requested, input.body.name);
    }
  }
  throw new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });
}
