import { randomUUID } from 'node:crypto';
import { type NamedWrite, TransactionRefused, transact } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { CONFLICT } from '../errors/catalogue/request.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { planOf } from '../plans.ts';
import { createdClientOf, newProjectTransaction } from '../project-setup/create.ts';
import { newProjectRecord, toProject } from '../projects/projects.ts';
import { cancelProvisionalExpiry, provisionalExpirySeconds, scheduleProvisionalExpiry } from '../projects/provisional.ts';
import { extendProvisional, getProjectItem, projectIsActive, projectItem, type ProjectItem } from '../projects/records.ts';
import { acceptableSubdomain, anotherSubdomain, subdomainOfName } from '../projects/subdomain.ts';
import { teamInGoodStanding } from '../teams/standing-check.ts';
import {
  admit,
  admitAgain,
  type BeginBody,
  type BeginCaller,
  checkFiles,
  discardPrepared,
  type PreparedSession,
  prepareSession,
  refuseSuspended,
  sessionOpening,
  TRANSACTION_ATTEMPTS,
  type TeamStanding,
  type UploadSessionView,
  view,
} from './sessions.ts';
import { uploadingDeployment } from '../deployments/records.ts';

/**
 * Beginning an upload: the upload session (lib/publishing/sessions.ts) opens with the deployment it will
 * publish, and, for a first upload, the provisional project it belongs to, all in one transaction.
 */

const tooManyChanges = () => new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });

/** The session and its deployment, opened together. */
const openingWrites = (prepared: PreparedSession, slots: Parameters<typeof sessionOpening>[1]): NamedWrite[] => [
  uploadingDeployment(prepared.record),
  ...sessionOpening(prepared, slots),
];

/**
 * POST /api/v1/uploads: checks the files, then creates the provisional
 * project and opens its upload session in one transaction. The subdomain and
 * name holds, the plan's site limit (a counter), the team's session cap (a
 * versioned slots item) and the team's standing are all conditions of that
 * transaction, so racing requests cannot both win.
 */
export async function beginUploadWithNewProject(input: {
  team: TeamStanding;
  caller: BeginCaller;
  body: BeginBody & { project: { name: string; subdomain?: string | null } };
}): Promise<UploadSessionView> {
  const { team, body } = input;
  refuseSuspended(team);
  const plan = planOf(team);
  const manifest = checkFiles(body.files, plan);
  const name = body.project.name;
  const requested = body.project.subdomain != null;
  let subdomain = requested ? await acceptableSubdomain(body.project.subdomain!, name) : subdomainOfName(name);

  const projectId = randomUUID();
  const now = new Date();
  const provisionalUntil = new Date(now.getTime() + provisionalExpirySeconds() * 1000);
  const admission = admit(team.id, plan);
  // Scheduled before the project exists: if a later step fails the worker finds no project and does nothing.
  const admitted = admission.then(() => scheduleProvisionalExpiry(projectId, provisionalUntil));
  const prepared = await prepareSession({
    teamId: team.id,
    projectId,
    projectSlug: subdomain,
    manifest,
    label: body.label ?? null,
    now,
    admitted,
  });
  let slots = await admission;

  try {
    for (let attempt = 0; ; attempt++) {
      const record = newProjectRecord({
        id: projectId,
        teamId: team.id,
        name,
        subdomain,
        now: now.toISOString(),
        provisionalUntil: provisionalUntil.toISOString(),
        createdVia: input.caller.kind,
        createdClient: createdClientOf(input.caller.client),
      });
      // The slug is the subdomain this attempt holds, so the session stores files under it.
      const session = { ...prepared, record: { ...prepared.record, project_slug: record.slug } };
      try {
        await transact([...newProjectTransaction(team.id, plan, record), ...openingWrites(session, slots)]);
        return view(prepared, toProject(projectItem(record)));
      } catch (error) {
        if (!(error instanceof TransactionRefused)) throw error;
        if (error.failed.has('subdomain')) subdomain = await anotherSubdomain(subdomain, requested, name);
        if (error.failed.has('slots')) slots = await admitAgain(team.id, plan, attempt);
        if (attempt + 1 >= TRANSACTION_ATTEMPTS) throw tooManyChanges();
      }
    }
  } catch (error) {
    await Promise.all([discardPrepared(prepared), cancelProvisionalExpiry(projectId).catch(() => undefined)]);
    throw error;
  }
}

/**
 * POST /api/v1/projects/{id}/uploads: a new session for an existing project
 * (the retry path). On a provisional project it also moves the expiry to
 * 2 h 15 min after this begin.
 */
export async function beginUploadForProject(input: {
  team: TeamStanding;
  projectItem: ProjectItem;
  body: BeginBody;
}): Promise<UploadSessionView> {
  const { team } = input;
  refuseSuspended(team);
  const plan = planOf(team);
  const manifest = checkFiles(input.body.files, plan);
  const projectId = input.projectItem.id;
  if (input.projectItem.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);

  const now = new Date();
  let provisional = Boolean(input.projectItem.provisional_until);
  const provisionalUntil = new Date(now.getTime() + provisionalExpirySeconds() * 1000);
  const admission = admit(team.id, plan);
  const prepared = await prepareSession({
    teamId: team.id,
    projectId,
    projectSlug: input.projectItem.slug,
    liveDeploymentId: input.projectItem.live_deployment_id,
    manifest,
    label: input.body.label ?? null,
    now,
    admitted: admission.then(() => (provisional ? scheduleProvisionalExpiry(projectId, provisionalUntil) : undefined)),
  });
  let slots = await admission;

  try {
    for (let attempt = 0; ; attempt++) {
      const project = provisional
        ? extendProvisional(projectId, provisionalUntil.toISOString(), now.toISOString())
        : projectIsActive(projectId);
      try {
        await transact([teamInGoodStanding(team.id), project, ...openingWrites(prepared, slots)]);
        return view(prepared);
      } catch (error) {
        if (!(error instanceof TransactionRefused)) throw error;
        if (error.failed.has('project')) {
          const current = await getProjectItem(projectId, true);
          if (!current || current.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);
          // It published in between: no longer provisional.
          provisional = Boolean(current.provisional_until);
        }
        if (error.failed.has('slots')) slots = await admitAgain(team.id, plan, attempt);
        if (attempt + 1 >= TRANSACTION_ATTEMPTS) throw tooManyChanges();
      }
    }
  } catch (error) {
    await discardPrepared(prepared);
    throw error;
  }
}
