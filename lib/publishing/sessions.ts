import { randomUUID } from 'node:crypto';
import { deleteObject, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { batchWriteAll } from '../db/batch.ts';
import { epochSeconds, keys } from '../db/keys.ts';
import type { NamedWrite } from '../db/transact.ts';
import { ApiError } from '../errors/api-error.ts';
import { PLAN_LIMIT_EXCEEDED, TEAM_SUSPENDED, TOO_MANY_UPLOAD_SESSIONS, UPLOAD_NOT_FOUND } from '../errors/catalogue/sites.ts';
import type { Plan } from '../plans.ts';
import type { Project } from '../projects/projects.ts';
import { authorizeResourceTeam, type ResourceContext } from '../identity/resource-access.ts';
import { UUID_PATTERN } from '../teams/slug.ts';
import { heldBlobs } from './blob-records.ts';
import { liveObjects } from './blobs.ts';
import { receivedEntryKeys } from './received.ts';
import type { UploadSessionRecord } from '../deployments/session-record.ts';
import {
  getSessionItem,
  projectSessionItems,
  readSlots,
  sessionClose,
  sessionPut,
  slotTake,
  slotsRelease,
  type Slots,
  type StoredSession,
} from './session-records.ts';
import { readManifest, type StoredManifest } from './stored-manifest.ts';
import { checkManifest, checkPublishable, type CheckedManifest, type ManifestFile } from './manifest.ts';

export type { UploadSessionRecord } from '../deployments/session-record.ts';

/**
 * The upload session, from open to finalized and released: this module opens it (the manifest checked,
 * what the team holds narrowed out, the plan's cap on open sessions taken), and closes it once, for a
 * publish or a failed functions build, freeing its place among the team's open sessions. Those who
 * publish (lib/deployments/) put its writes in their transactions; none of them writes its records.
 */

/** How long an upload session accepts files and a finalize. */
export const uploadSessionSeconds = () => config.uploadSessionSeconds();

/** Racing begins retry a lost optimistic write (the team's session slots); each round one of them wins. */
export const TRANSACTION_ATTEMPTS = 25;

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
export function admit(teamId: string, plan: Plan): Promise<Slots> {
  const admission = readSlots(teamId).then((slots) => {
    refuseTooManySessions(slots, plan);
    return slots;
  });
  // Awaited by the caller; until then a refusal must not count as unhandled.
  admission.catch(() => undefined);
  return admission;
}

/** After a begin lost the slots item to a racing one: a pause, then the slots read and checked again. */
export async function admitAgain(teamId: string, plan: Plan, attempt: number): Promise<Slots> {
  await jitter(attempt);
  const slots = await readSlots(teamId);
  refuseTooManySessions(slots, plan);
  return slots;
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

/**
 * The writes that open a prepared session: its item, and its place among the team's open sessions
 * (`slots`, on the version read: a racing begin makes it fail, and the begin admits again). A build's
 * session (no slots) takes no place.
 */
export function sessionOpening(prepared: PreparedSession, slots: Slots | null): NamedWrite[] {
  const r = prepared.record;
  return [sessionPut(r, prepared.expiresEpoch), ...(slots ? [slotTake(r.team_id, slots, r.upload_id, prepared.expiresEpoch)] : [])];
}

/** The writes that close an open session once (`session`), and free its place among the team's open sessions. */
export function sessionClosing(session: UploadSessionRecord, now: string, outcome?: 'failed'): NamedWrite[] {
  return [
    sessionClose(session.upload_id, now, outcome),
    ...slotsRelease(session.team_id, session.holds_slot === false ? [] : [session.upload_id]),
  ];
}

/** The session, read again after a racing finalize may have closed it: the closed session, or null while open. */
export async function closedSession(uploadId: string): Promise<UploadSessionRecord | null> {
  const current = await getUploadSession(uploadId);
  return current?.status === 'finalized' ? current : null;
}

/** A project's sessions, for its removal. */
export function projectSessions(projectId: string): Promise<UploadSessionRecord[]> {
  return projectSessionItems(projectId);
}

/** Removes a removed project's sessions: their items, what their requests recorded, their manifests. */
export async function discardSessions(sessions: UploadSessionRecord[]): Promise<void> {
  for (const session of sessions) {
    const itemKeys = [keys.uploadSession(session.upload_id), ...(await receivedEntryKeys(session.upload_id))];
    await batchWriteAll(itemKeys.map((Key) => ({ DeleteRequest: { Key } })));
    await deleteObject(config.bucket('bundles'), session.manifest_key).catch(() => undefined);
  }
}

/** Frees every place a removed project's sessions held among the team's open ones (`slots`). */
export function slotsOfRemovedSessions(teamId: string, sessions: UploadSessionRecord[]): NamedWrite[] {
  return slotsRelease(
    teamId,
    sessions.map((s) => s.upload_id),
    { whereHeld: true },
  );
}

export function view(prepared: PreparedSession, project?: Project): UploadSessionView {
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

export async function discardPrepared(prepared: PreparedSession): Promise<void> {
  // The expected-hash items expire with their TTL; the manifest object is removed now.
  await deleteObject(config.bucket('bundles'), prepared.record.manifest_key).catch(() => undefined);
}

export function getUploadSession(uploadId: string): Promise<StoredSession | null> {
  return getSessionItem(uploadId);
}

/** The session a path names, once the caller passed the route's rule on its team (another team's is not found). */
export async function loadUploadSessionForCaller(ctx: ResourceContext, uploadId: string): Promise<UploadSessionRecord> {
  const session = UUID_PATTERN.test(uploadId) ? await getUploadSession(uploadId.toLowerCase()) : null;
  if (!session) throw new ApiError(UPLOAD_NOT_FOUND);
  await authorizeResourceTeam(ctx, session.team_id, UPLOAD_NOT_FOUND);
  return session;
}

/** What a begin keeps for replays: its session, and the project it created (a begin with a new project). */
export type StoredBegin = { upload_id: string; project?: Project };

/** Rebuilds the begin-upload answer of a session (Idempotency-Key replays). */
export async function replaySessionView(stored: StoredBegin): Promise<UploadSessionView> {
  const session = await getUploadSession(stored.upload_id);
  if (!session) throw new ApiError(UPLOAD_NOT_FOUND);
  const { missing } = await readManifest(session);
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    ...(stored.project ? { project: stored.project } : {}),
    expires_at: session.expires_at,
    known_count: session.known_count,
    missing,
    total_bytes_to_send: session.total_bytes_to_send,
  };
}

export type { ManifestFile };
