import { randomUUID } from 'node:crypto';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { deleteObject, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import {
  CONFLICT,
  PLAN_LIMIT_EXCEEDED,
  PROJECT_NOT_FOUND,
  SUBDOMAIN_INVALID,
  SUBDOMAIN_RESERVED,
  SUBDOMAIN_TAKEN,
  TEAM_SUSPENDED,
  TOO_MANY_UPLOAD_SESSIONS,
  UPLOAD_NOT_FOUND,
} from '../errors/catalogue.ts';
import { planOf, type Plan } from '../plans.ts';
import { CREATED_CLIENTS, newProjectRecord, projectItem, toProject, type Project } from '../projects/projects.ts';
import { cancelProvisionalExpiry, provisionalExpirySeconds, scheduleProvisionalExpiry } from '../projects/provisional.ts';
import { randomSuffix, subdomainFrom, subdomainProblem, suggestSubdomains, withSuffix } from '../projects/subdomain.ts';
import { authorizeResourceTeam } from '../projects/access.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { heldBlobs, liveObjects } from './blobs.ts';
import { SESSION_RETENTION_SECONDS } from './received.ts';
import type { UploadSessionRecord } from './session-record.ts';
import { readManifest, type StoredManifest } from './stored-manifest.ts';

export type { UploadSessionRecord } from './session-record.ts';
import { checkManifest, checkPublishable, type CheckedManifest, type ManifestFile } from './manifest.ts';
import { conditionFailedAt, isTransactionCanceled } from '../db/errors.ts';
import { projectActiveCheck } from '../projects/active-check.ts';
import { creationRefusal, newProjectItems } from '../projects/create.ts';

/** How long an upload session accepts files and a finalize. */
export function uploadSessionSeconds(): number {
  const value = Number(process.env.UPLOAD_SESSION_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : 7200;
}

/** Racing begins retry a lost optimistic write (the team's session slots); each round one of them wins. */
const TRANSACTION_ATTEMPTS = 25;

const jitter = (attempt: number) => new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 10 * 2 ** attempt)));

export interface UploadSessionView {
  upload_id: string;
  deployment_id: string;
  project_id: string;
  project?: Project;
  expires_at: string;
  known_count: number;
  missing: string[];
  total_bytes_to_send: number;
}

/** The team fields begin-upload reads from the team item (plan, suspension). */
export interface TeamStanding {
  id: string;
  plan?: unknown;
  suspended_at?: unknown;
}

export interface BeginCaller {
  kind: 'session' | 'api_key';
  /** X-Platform-Client as sent. */
  client: string | undefined;
}

export interface BeginBody {
  files?: unknown;
  label?: string | null;
}

export function refuseSuspended(team: TeamStanding): void {
  if (team.suspended_at) throw new ApiError(TEAM_SUSPENDED);
}

/** Manifest, publishability and the plan's upload allowance: all before anything is created. */
export function checkFiles(files: unknown, plan: Plan): CheckedManifest {
  const manifest = checkManifest(files, plan);
  checkPublishable(manifest.files);
  if (manifest.totalBytes > plan.maxUploadBytes) {
    throw new ApiError(PLAN_LIMIT_EXCEEDED, {
      message: `This upload is ${manifest.totalBytes} bytes; the ${plan.name} plan allows ${plan.maxUploadBytes} bytes per deployment.`,
      details: { limit: 'upload_bytes', plan: plan.name, max_bytes: plan.maxUploadBytes, total_bytes: manifest.totalBytes },
    });
  }
  return manifest;
}

interface Slots {
  version: number | null;
  live: Record<string, number>;
}

async function readSlots(teamId: string): Promise<Slots> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.teamUploadSlots(teamId), ConsistentRead: true }),
  );
  const now = epochSeconds(new Date());
  const live = Object.fromEntries(
    Object.entries((reply.Item?.slots ?? {}) as Record<string, number>).filter(([, expires]) => expires > now),
  );
  return { version: (reply.Item?.version as number | undefined) ?? null, live };
}

/** 429 when the team has as many open sessions as its plan allows; Retry-After names when the first one expires. */
function refuseTooManySessions(slots: Slots, plan: Plan): void {
  const open = Object.values(slots.live);
  if (open.length < plan.maxOpenUploadSessions) return;
  const retryAfter = Math.max(1, Math.min(...open) - epochSeconds(new Date()));
  throw new ApiError(TOO_MANY_UPLOAD_SESSIONS, {
    details: { max_open_sessions: plan.maxOpenUploadSessions, plan: plan.name },
    headers: { 'retry-after': String(retryAfter) },
  });
}

/** The team's session slots, read and checked against the plan's cap (refused with TOO_MANY_UPLOAD_SESSIONS). */
function admit(teamId: string, plan: Plan): Promise<Slots> {
  const admission = readSlots(teamId).then((slots) => {
    refuseTooManySessions(slots, plan);
    return slots;
  });
  // Awaited by the caller; until then a refusal must not count as unhandled.
  admission.catch(() => undefined);
  return admission;
}

/**
 * The slots item with one more session, written only if nobody changed it
 * since it was read (an optimistic version), so racing begins cannot exceed the cap.
 */
function slotsPut(teamId: string, slots: Slots, uploadId: string, expiresEpoch: number) {
  return {
    Put: {
      TableName: config.tableName(),
      Item: {
        ...keys.teamUploadSlots(teamId),
        type: 'upload_slots',
        slots: { ...slots.live, [uploadId]: expiresEpoch },
        version: (slots.version ?? 0) + 1,
      },
      ConditionExpression: slots.version === null ? 'attribute_not_exists(pk)' : 'version = :v',
      ExpressionAttributeValues: slots.version === null ? undefined : { ':v': slots.version },
    },
  };
}

export interface PreparedSession {
  record: UploadSessionRecord;
  missing: string[];
  expiresEpoch: number;
}

/** Narrows `missing` to what the team does not hold, and stores the manifest with it. */
export async function prepareSession(input: {
  teamId: string;
  projectId: string;
  /** The project's slug: the middle segment of every key its uploads store (a new project's may still change). */
  projectSlug: string;
  liveDeploymentId?: string | null;
  manifest: CheckedManifest;
  label: string | null;
  now: Date;
  /**
   * Settles when the begin may store anything (the team's session cap checked, and what must precede the
   * session scheduled); it runs while the team's holdings are looked up, and a refusal stores nothing.
   */
  admitted: Promise<unknown>;
  /** A build's deployment, recorded before its files exist; an upload's is new. */
  deploymentId?: string;
}): Promise<PreparedSession> {
  // Awaited below, unless a lookup fails first: then its own failure must not count as unhandled.
  input.admitted.catch(() => undefined);
  const uploadId = randomUUID();
  const deploymentId = input.deploymentId ?? randomUUID();
  const expires = new Date(input.now.getTime() + uploadSessionSeconds() * 1000);
  const hashes = [...input.manifest.blobs.keys()];
  // A redeploy mostly repeats what the project serves: one read of the live route manifest answers
  // for those, and only the rest are looked up in the team's records.
  const served = input.liveDeploymentId
    ? await liveObjects(input.teamId, input.projectSlug, input.liveDeploymentId)
    : new Map<string, string>();
  const unserved = hashes.filter((h) => !served.has(h));
  const held = await heldBlobs(input.teamId, unserved);
  const missing = unserved.filter((h) => !held.has(h)).sort();
  const totalBytesToSend = missing.reduce((sum, h) => sum + input.manifest.blobs.get(h)!, 0);
  const manifestKey = `uploads/${uploadId}/manifest.json`;

  await input.admitted;
  const stored: StoredManifest = { files: input.manifest.files, missing };
  await putObject({ bucket: config.bucket('bundles'), key: manifestKey, body: JSON.stringify(stored), contentType: 'application/json' });

  return {
    record: {
      upload_id: uploadId,
      deployment_id: deploymentId,
      project_id: input.projectId,
      project_slug: input.projectSlug,
      team_id: input.teamId,
      status: 'open',
      label: input.label,
      created_at: input.now.toISOString(),
      expires_at: expires.toISOString(),
      manifest_key: manifestKey,
      file_count: input.manifest.files.length,
      total_bytes: input.manifest.totalBytes,
      known_count: hashes.length - missing.length,
      missing_count: missing.length,
      total_bytes_to_send: totalBytesToSend,
    },
    missing,
    expiresEpoch: epochSeconds(expires),
  };
}

function sessionPuts(prepared: PreparedSession) {
  const r = prepared.record;
  const table = config.tableName();
  return [
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.deployment(r.project_id, r.deployment_id),
          ...keys.deploymentByProject(r.project_id, r.created_at, r.deployment_id),
          type: 'deployment',
          id: r.deployment_id,
          project_id: r.project_id,
          team_id: r.team_id,
          status: 'uploading',
          label: r.label,
          created_at: r.created_at,
          ready_at: null,
          file_count: r.file_count,
          total_bytes: r.total_bytes,
          upload_id: r.upload_id,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.uploadSession(r.upload_id),
          ...keys.uploadSessionByProject(r.project_id, r.created_at, r.upload_id),
          type: 'upload_session',
          ...r,
          ttl: prepared.expiresEpoch + SESSION_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

export function teamNotSuspended(teamId: string) {
  return {
    ConditionCheck: {
      TableName: config.tableName(),
      Key: keys.team(teamId),
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(suspended_at) OR suspended_at = :null)',
      ExpressionAttributeValues: { ':null': null },
    },
  };
}

function view(prepared: PreparedSession, project?: Project): UploadSessionView {
  const r = prepared.record;
  return {
    upload_id: r.upload_id,
    deployment_id: r.deployment_id,
    project_id: r.project_id,
    ...(project ? { project } : {}),
    expires_at: r.expires_at,
    known_count: r.known_count,
    missing: prepared.missing,
    total_bytes_to_send: r.total_bytes_to_send,
  };
}

async function discardPrepared(prepared: PreparedSession): Promise<void> {
  // The expected-hash items expire with their TTL; the manifest object is removed now.
  await deleteObject(config.bucket('bundles'), prepared.record.manifest_key).catch(() => undefined);
}

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

  const requested = body.project.subdomain == null ? null : body.project.subdomain.trim().toLowerCase();
  let subdomain: string;
  if (requested !== null) {
    const problem = subdomainProblem(requested);
    if (problem) {
      throw new ApiError(problem === 'invalid' ? SUBDOMAIN_INVALID : SUBDOMAIN_RESERVED, {
        details: { subdomain: body.project.subdomain, suggestions: await suggestSubdomains(requested, name) },
      });
    }
    subdomain = requested;
  } else {
    subdomain = subdomainFrom(name);
    if (subdomainProblem(subdomain) !== null) subdomain = withSuffix(subdomain, 'site');
  }

  const projectId = randomUUID();
  const now = new Date();
  const provisionalUntil = new Date(now.getTime() + provisionalExpirySeconds() * 1000);
  const client = input.caller.client?.trim().toLowerCase();
  const createdClient = (CREATED_CLIENTS as readonly string[]).includes(client ?? '') ? (client as Project['created_client']) : null;

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
        createdClient,
      });
      try {
        await dynamo().send(
          new TransactWriteCommand({
            TransactItems: [
              ...newProjectItems(team.id, plan, record),
              // The slug is the subdomain this attempt holds, so the session stores files under it.
              ...sessionPuts({ ...prepared, record: { ...prepared.record, project_slug: record.slug } }),
              slotsPut(team.id, slots, prepared.record.upload_id, prepared.expiresEpoch),
            ],
          }),
        );
        return view(prepared, toProject(projectItem(record)));
      } catch (error) {
        if (!isTransactionCanceled(error)) throw error;
        const refusal = creationRefusal(error, plan, name);
        if (refusal) throw refusal;
        if (conditionFailedAt(error, 2)) {
          if (requested !== null) {
            throw new ApiError(SUBDOMAIN_TAKEN, { details: { subdomain, suggestions: await suggestSubdomains(subdomain, name) } });
          }
          // A derived subdomain is ours to pick: try another.
          subdomain = withSuffix(subdomainFrom(name), randomSuffix());
        }
        if (conditionFailedAt(error, 7)) {
          await jitter(attempt);
          slots = await readSlots(team.id);
          refuseTooManySessions(slots, plan);
        }
        if (attempt + 1 >= TRANSACTION_ATTEMPTS) throw new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });
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
  projectItem: Record<string, unknown>;
  body: BeginBody;
}): Promise<UploadSessionView> {
  const { team } = input;
  refuseSuspended(team);
  const plan = planOf(team);
  const manifest = checkFiles(input.body.files, plan);
  const projectId = input.projectItem.id as string;
  if (input.projectItem.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);

  const now = new Date();
  let provisional = Boolean(input.projectItem.provisional_until);
  const provisionalUntil = new Date(now.getTime() + provisionalExpirySeconds() * 1000);
  const admission = admit(team.id, plan);
  const prepared = await prepareSession({
    teamId: team.id,
    projectId,
    projectSlug: input.projectItem.slug as string,
    liveDeploymentId: input.projectItem.live_deployment_id as string | null | undefined,
    manifest,
    label: input.body.label ?? null,
    now,
    admitted: admission.then(() => (provisional ? scheduleProvisionalExpiry(projectId, provisionalUntil) : undefined)),
  });
  let slots = await admission;
  const table = config.tableName();

  try {
    for (let attempt = 0; ; attempt++) {
      const projectCondition = provisional
        ? {
            Update: {
              TableName: table,
              Key: keys.project(projectId),
              UpdateExpression: 'SET provisional_until = :until, updated_at = :now',
              ConditionExpression: '#status = :active AND attribute_exists(provisional_until) AND provisional_until <> :null',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: {
                ':until': provisionalUntil.toISOString(),
                ':now': now.toISOString(),
                ':active': 'active',
                ':null': null,
              },
            },
          }
        : projectActiveCheck(projectId);
      try {
        await dynamo().send(
          new TransactWriteCommand({
            TransactItems: [
              teamNotSuspended(team.id),
              projectCondition,
              ...sessionPuts(prepared),
              slotsPut(team.id, slots, prepared.record.upload_id, prepared.expiresEpoch),
            ],
          }),
        );
        return view(prepared);
      } catch (error) {
        if (!isTransactionCanceled(error)) throw error;
        if (conditionFailedAt(error, 0)) throw new ApiError(TEAM_SUSPENDED);
        if (conditionFailedAt(error, 1)) {
          const current = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(projectId), ConsistentRead: true })))
            .Item;
          if (!current || current.status !== 'active') throw new ApiError(PROJECT_NOT_FOUND);
          // It published in between: no longer provisional.
          provisional = Boolean(current.provisional_until);
        }
        if (conditionFailedAt(error, 4)) {
          await jitter(attempt);
          slots = await readSlots(team.id);
          refuseTooManySessions(slots, plan);
        }
        if (attempt + 1 >= TRANSACTION_ATTEMPTS) throw new ApiError(CONFLICT, { message: 'Too many concurrent changes; try again.' });
      }
    }
  } catch (error) {
    await discardPrepared(prepared);
    throw error;
  }
}

export async function getUploadSession(uploadId: string): Promise<(UploadSessionRecord & Record<string, unknown>) | null> {
  const reply = await dynamo().send(
    new GetCommand({ TableName: config.tableName(), Key: keys.uploadSession(uploadId), ConsistentRead: true }),
  );
  return (reply.Item as (UploadSessionRecord & Record<string, unknown>) | undefined) ?? null;
}

/** The session a path names, once the caller passed the route's rule on its team (another team's is not found). */
export async function loadUploadSessionForCaller(
  ctx: Parameters<typeof authorizeResourceTeam>[0],
  uploadId: string,
): Promise<UploadSessionRecord> {
  const session = UUID_PATTERN.test(uploadId) ? await getUploadSession(uploadId.toLowerCase()) : null;
  if (!session) throw new ApiError(UPLOAD_NOT_FOUND);
  await authorizeResourceTeam(ctx, session.team_id, UPLOAD_NOT_FOUND);
  return session;
}

/** Rebuilds the begin-upload answer of a session (Idempotency-Key replays). */
export async function replaySessionView(stored: Record<string, unknown>): Promise<UploadSessionView> {
  const session = await getUploadSession(stored.upload_id as string);
  if (!session) throw new ApiError(UPLOAD_NOT_FOUND);
  const { missing } = await readManifest(session);
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    ...(stored.project ? { project: stored.project as Project } : {}),
    expires_at: session.expires_at,
    known_count: session.known_count,
    missing,
    total_bytes_to_send: session.total_bytes_to_send,
  };
}

export type { ManifestFile };
