import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { readTeamState, recordDeployFailure, recordSuccessfulDeploy } from '../attention/team-state.ts';
import pLimit from 'p-limit';
import { dynamo } from '../aws/clients.ts';
import { copyObject, deleteKeys, listKeysPage, putObject } from '../aws/s3-lite.ts';
import { config } from '../config.ts';
import { keys } from '../db/keys.ts';
import { ApiError } from '../errors/api-error.ts';
import { FUNCTIONS_BUILD_FAILED, PROJECT_EXPIRED, PUBLISH_IN_PROGRESS, UPLOAD_INCOMPLETE, UPLOAD_NOT_FOUND } from '../errors/catalogue.ts';
import { productionUrl } from '../projects/projects.ts';
import { screenshotJobOfPublish } from '../screenshots/jobs.ts';
import { abuseScanOfPublish } from '../abuse/scans.ts';
import { cancelProvisionalExpiry } from '../projects/provisional.ts';
import { forgetHeldBlobs, heldBlobs, liveObjects, rememberLiveObjects, type HeldBlob } from '../uploads/blobs.ts';
import { requireOpenSession } from '../uploads/files.ts';
import { readManifest } from '../uploads/stored-manifest.ts';
import { receivedHashes } from '../uploads/received.ts';
import { getUploadSession, type UploadSessionRecord } from '../uploads/sessions.ts';
import type { RouteManifest, RouteManifestFile } from '../sites/route-manifest.ts';
import { buildDeploymentFunctions, functionEntries, rootPrefix } from '../functions/build.ts';
import { contentTypeFor } from './content-type.ts';
import { deploymentPrefix, manifestObjectKey, routeManifestKey } from '../sites/storage-keys.ts';
import { isConditionalCheckFailure, isTransactionCanceled } from '../db/errors.ts';
import { projectActiveCheck } from '../projects/active-check.ts';

/** Server-side copies in flight at once while publishing. */
const COPY_CONCURRENCY = 48;
/** Copies made between two looks at the clock. */
const COPY_CHUNK = 500;

/**
 * How long one finalize call copies before it answers "still publishing": API
 * Gateway cuts a request at 30 s, and a deployment reusing thousands of another
 * project's files (or a slow endpoint) may need more; the next call carries on
 * from what the deployment folder already holds.
 */
function publishBudgetMs(): number {
  const value = Number(process.env.FINALIZE_BUDGET_MS);
  return Number.isFinite(value) && value > 0 ? value : 20_000;
}

export interface FinalizeResult {
  upload_id: string;
  deployment_id: string;
  project_id: string;
  status: 'ready';
  url: string;
  file_count: number;
  total_bytes: number;
  ready_at: string;
}

/** The answer of a finalize whose functions build failed: the same, every time the session is finalized again. */
const buildFailed = (buildLog: unknown) =>
  new ApiError(FUNCTIONS_BUILD_FAILED, { details: { build_log: Array.isArray(buildLog) ? buildLog : [] } });

/** The answer for a closed session: its deployment, or the failure of its functions build. */
/**
 * The transaction item that frees a closed session's place among the team's open sessions (the plan's cap);
 * none for a build's session, which never took one.
 */
function releaseUploadSlot(teamId: string, session: UploadSessionRecord) {
  if (session.holds_slot === false) return [];
  return [
    {
      Update: {
        TableName: config.tableName(),
        Key: keys.teamUploadSlots(teamId),
        UpdateExpression: 'REMOVE slots.#upload SET version = if_not_exists(version, :zero) + :one',
        ExpressionAttributeNames: { '#upload': session.upload_id },
        ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
      },
    },
  ];
}

async function finalizedResult(session: UploadSessionRecord): Promise<FinalizeResult> {
  const [project, deployment] = await Promise.all([
    dynamo().send(new GetCommand({ TableName: config.tableName(), Key: keys.project(session.project_id) })),
    dynamo().send(
      new GetCommand({
        TableName: config.tableName(),
        Key: keys.deployment(session.project_id, session.deployment_id),
        ConsistentRead: true,
      }),
    ),
  ]);
  if (!project.Item || !deployment.Item) throw new ApiError(UPLOAD_NOT_FOUND);
  if (deployment.Item.status === 'failed') throw buildFailed(deployment.Item.build_log);
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    status: 'ready',
    url: productionUrl(project.Item.subdomain as string),
    file_count: deployment.Item.file_count as number,
    total_bytes: deployment.Item.total_bytes as number,
    ready_at: deployment.Item.ready_at as string,
  };
}

/** Every key under a prefix. */
async function listKeys(bucket: string, prefix: string): Promise<Set<string>> {
  const found = new Set<string>();
  let token: string | undefined;
  do {
    const page = await listKeysPage(bucket, prefix, token);
    for (const key of page.keys) found.add(key);
    token = page.next;
  } while (token);
  return found;
}

const isNoSuchKey = (error: unknown) =>
  (error as Error).name === 'NoSuchKey' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404;

async function deletePrefix(bucket: string, prefix: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await listKeysPage(bucket, prefix, token);
    await deleteKeys(bucket, page.keys);
    token = page.next;
  } while (token);
}

/**
 * POST /api/v1/uploads/{upload_id}/finalize. Uploads already stored each
 * content in the deployment folder (`{team_id}/{slug}/{deployment_id}/{path}`,
 * at its first path). Finalize checks that every file asked for is there, finds
 * the contents the team already held (the live deployment's objects and this
 * project's earlier ones are referenced, another project's are copied in),
 * builds the deployment's functions (buildFunctionsStep; a failed build ends
 * the session with FUNCTIONS_BUILD_FAILED and publishes nothing), writes the
 * route manifest once, then in one transaction marks the deployment
 * ready, points production at it, clears provisional_until and closes the
 * session. A repeated (or concurrent) finalize answers with the same deployment.
 */
export async function finalizeUpload(sessionIn: UploadSessionRecord): Promise<FinalizeResult> {
  if (sessionIn.status === 'finalized') return finalizedResult(sessionIn);
  requireOpenSession(sessionIn);
  const session = sessionIn;
  const table = config.tableName();
  const teamId = session.team_id;
  const sites = config.bucket('sites');
  // What the session's upload requests recorded as stored (lib/uploads/received.ts), read while the
  // project is: one query where a listing of the folder would take a call per thousand keys.
  const recorded = receivedHashes(session.upload_id);
  recorded.catch(() => undefined);
  // The team's attention item, for the successful deploy a publish records: read now, so that record is one write.
  const attention = readTeamState(teamId);
  const [projectReply, deploymentReply, manifest] = await Promise.all([
    dynamo().send(new GetCommand({ TableName: table, Key: keys.project(session.project_id), ConsistentRead: true })),
    dynamo().send(
      new GetCommand({ TableName: table, Key: keys.deployment(session.project_id, session.deployment_id), ConsistentRead: true }),
    ),
    readManifest(session),
  ]);
  const projectItem = projectReply.Item;
  if (!projectItem || projectItem.status !== 'active') throw new ApiError(PROJECT_EXPIRED);
  const deploymentItem = deploymentReply.Item;
  if (!deploymentItem) throw new ApiError(UPLOAD_NOT_FOUND);
  const slug = projectItem.slug as string;
  const prefix = deploymentPrefix(teamId, slug, session.deployment_id);
  const projectFolder = `${teamId}/${slug}/`;
  // The uploads stored under the slug the session began with: their record speaks for this folder only
  // while that is still the project's.
  const received = slug === session.project_slug ? await recorded : new Set<string>();
  const asked = new Set(manifest.missing);

  // Contents the team held at begin and nobody uploaded: referenced where this project already has
  // them (so a redeploy that changed one file stores one file), copied in from another project.
  const elsewhere = [...manifest.placements.keys()].filter((hash) => !asked.has(hash));
  const references = new Map(
    elsewhere.length > 0 ? await liveObjects(teamId, slug, projectItem.live_deployment_id as string | null | undefined) : [],
  );
  const unresolved = elsewhere.filter((hash) => !references.has(hash));
  const held = unresolved.length > 0 ? await heldBlobs(teamId, unresolved) : new Map<string, HeldBlob>();
  let toCopy: HeldBlob[] = [];
  let lost: string[] = [];
  for (const hash of unresolved) {
    const blob = held.get(hash);
    if (!blob) lost.push(hash);
    else if (blob.project_id === session.project_id && blob.object_key.startsWith(projectFolder))
      references.set(hash, blob.object_key.slice(projectFolder.length));
    else toCopy.push(blob);
  }

  // What the record leaves open is settled by the folder itself: files it does not name, and the
  // copies an earlier call of this finalize made before it answered PUBLISH_IN_PROGRESS.
  const unconfirmed = manifest.missing.filter((hash) => !received.has(hash));
  if (unconfirmed.length > 0 || toCopy.length > 0 || lost.length > 0) {
    const present = await listKeys(sites, prefix);
    const inFolder = (hash: string) => present.has(`${prefix}${manifest.placements.get(hash)!.path}`);
    const notReceived = unconfirmed.filter((hash) => !inFolder(hash));
    if (notReceived.length > 0) {
      throw new ApiError(UPLOAD_INCOMPLETE, { details: { missing: notReceived, missing_count: notReceived.length } });
    }
    toCopy = toCopy.filter((blob) => !inFolder(blob.hash));
    lost = lost.filter((hash) => !inFolder(hash));
  }

  const started = Date.now();
  const limit = pLimit(COPY_CONCURRENCY);
  const stale: HeldBlob[] = [];
  let copied = 0;
  const inPlace = () => manifest.placements.size - toCopy.length - lost.length + copied;
  while (copied < toCopy.length) {
    if (copied > 0 && Date.now() - started > publishBudgetMs()) {
      throw new ApiError(PUBLISH_IN_PROGRESS, {
        details: { published_count: inPlace(), file_count: manifest.placements.size },
        headers: { 'retry-after': '1' },
      });
    }
    const chunk = toCopy.slice(copied, copied + COPY_CHUNK);
    await Promise.all(
      chunk.map((blob) =>
        limit(async () => {
          const placement = manifest.placements.get(blob.hash)!;
          try {
            await copyObject({
              bucket: sites,
              key: `${prefix}${placement.path}`,
              sourceBucket: sites,
              sourceKey: blob.object_key,
              contentType: contentTypeFor(placement.path),
            });
          } catch (error) {
            if (!isNoSuchKey(error)) throw error;
            stale.push(blob);
          }
        }),
      ),
    );
    copied += chunk.length;
  }
  if (stale.length > 0) await forgetHeldBlobs(teamId, stale);
  // Bytes the team held at begin but no longer does (their project was deleted): the client sends them.
  const resend = [...lost, ...stale.map((blob) => blob.hash)].sort();
  if (resend.length > 0) {
    throw new ApiError(UPLOAD_INCOMPLETE, { details: { missing: resend, missing_count: resend.length } });
  }

  const routeFiles: Record<string, RouteManifestFile> = {};
  for (const file of manifest.files) {
    const placement = manifest.placements.get(file.hash)!;
    const object = references.get(file.hash) ?? (placement.path === file.path ? undefined : `${session.deployment_id}/${placement.path}`);
    routeFiles[file.path] = { hash: file.hash, size: file.size, content_type: contentTypeFor(file.path), ...(object ? { object } : {}) };
  }
  const routeManifest: RouteManifest = {
    project_slug: slug,
    project_id: session.project_id,
    team_id: teamId,
    deployment_id: session.deployment_id,
    created_at: deploymentItem.created_at as string,
    files: routeFiles,
  };

  const root = rootPrefix(projectItem.root_directory);
  // A preview commits beside production: it never moves live_deployment_id and never deploys functions.
  const preview = session.target === 'preview';
  const hasFunctions = !preview && !deploymentItem.functions_built_at && functionEntries(Object.keys(routeFiles), root).entries.length > 0;
  if (hasFunctions && copied > 0 && Date.now() - started > publishBudgetMs() / 2) {
    // Copying used most of this call: the build starts afresh in the next one.
    throw new ApiError(PUBLISH_IN_PROGRESS, {
      details: { published_count: inPlace(), file_count: manifest.placements.size },
      headers: { 'retry-after': '1' },
    });
  }
  const step = preview ? { emptyBuild: true } : await buildFunctionsStep(session, projectItem, deploymentItem, routeManifest);
  if ('settled' in step) return step.settled;

  try {
    await putObject({
      bucket: sites,
      key: routeManifestKey(teamId, slug, session.deployment_id),
      body: JSON.stringify(routeManifest),
      contentType: 'application/json',
      // Written once: a racing finalize of the same session finds it there, with the same content.
      ifNoneMatch: '*',
    });
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if ((error as Error).name !== 'PreconditionFailed' && status !== 412) throw error;
  }

  const readyAt = new Date().toISOString();
  const url = productionUrl(projectItem.subdomain as string);
  // The screenshot job's and the keyword scan's records go live with the deployment (one transaction); their queueing follows it.
  const screenshot = preview
    ? null
    : screenshotJobOfPublish({ projectId: session.project_id, teamId, deploymentId: session.deployment_id, url });
  const scan = abuseScanOfPublish({
    projectId: session.project_id,
    teamId,
    deploymentId: session.deployment_id,
    slug,
    subdomain: projectItem.subdomain as string,
    branch: session.branch ?? (projectItem.default_branch as string | null),
    deployedAt: readyAt,
  });
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: keys.uploadSession(session.upload_id),
              UpdateExpression: 'SET #status = :finalized, finalized_at = :now',
              ConditionExpression: '#status = :open',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':finalized': 'finalized', ':open': 'open', ':now': readyAt },
            },
          },
          {
            Update: {
              TableName: table,
              Key: keys.deployment(session.project_id, session.deployment_id),
              UpdateExpression: `SET #status = :ready, ready_at = :now${step.emptyBuild ? ', build_log = :log, #functions = :none, functions_built_at = :now' : ''}`,
              // A build's deployment publishes from `building` (lib/builds/), an upload's from `uploading`.
              ConditionExpression: '#status IN (:uploading, :building)',
              ExpressionAttributeNames: { '#status': 'status', ...(step.emptyBuild ? { '#functions': 'functions' } : {}) },
              ExpressionAttributeValues: {
                ':ready': 'ready',
                ':uploading': 'uploading',
                ':building': 'building',
                ':now': readyAt,
                ...(step.emptyBuild ? { ':log': [], ':none': [] } : {}),
              },
            },
          },
          preview
            ? projectActiveCheck(session.project_id)
            : {
                // The expiry worker claims a project by setting status 'deleting' only while nothing
                // is live; this condition makes publish and expiry exclusive, whichever comes first wins.
                Update: {
                  TableName: table,
                  Key: keys.project(session.project_id),
                  UpdateExpression: 'SET live_deployment_id = :deployment, updated_at = :now REMOVE provisional_until',
                  ConditionExpression: '#status = :active',
                  ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: { ':deployment': session.deployment_id, ':now': readyAt, ':active': 'active' },
                },
              },
          ...releaseUploadSlot(teamId, session),
          // A capture of what is now live, and the keyword scan of what was published (lib/abuse/scans.ts).
          ...(screenshot ? [screenshot.transactItem] : []),
          ...scan.transactItems,
        ],
      }),
    );
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    const current = await getUploadSession(session.upload_id);
    if (current?.status === 'finalized') return finalizedResult(current);
    const project = (await dynamo().send(new GetCommand({ TableName: table, Key: keys.project(session.project_id), ConsistentRead: true })))
      .Item;
    if (!project || project.status !== 'active') {
      // The expiry won: the copies made above belong to nothing.
      await deletePrefix(sites, prefix).catch(() => undefined);
      throw new ApiError(PROJECT_EXPIRED);
    }
    throw error;
  }
  // The deployment is live. What follows is independent work (a record about it, and the queueing of work
  // taken off this path), done at once rather than one after another; none of it fails the publish.
  const queued = Promise.all([
    // Activation and the paying-idle clock (lib/attention/team-state.ts).
    recordSuccessfulDeploy(teamId, new Date(readyAt), attention),
    !preview && projectItem.provisional_until ? cancelProvisionalExpiry(session.project_id).catch(() => undefined) : undefined,
    screenshot?.queue(),
    scan.queue(),
  ]);
  // What the next redeploy of the project references, remembered while those requests travel.
  if (!preview) rememberLiveObjects(routeManifest);
  await queued;
  // The committed transaction wrote exactly this: no need to read it back.
  return {
    upload_id: session.upload_id,
    deployment_id: session.deployment_id,
    project_id: session.project_id,
    status: 'ready',
    url,
    file_count: deploymentItem.file_count as number,
    total_bytes: deploymentItem.total_bytes as number,
    ready_at: readyAt,
  };
}

/**
 * The functions build, once per deployment (a resumed or repeated finalize
 * finds `functions_built_at` and goes on). Success leaves the bundles, the
 * function records and the build log in place before the commit transaction,
 * so once production points at the deployment its functions exist. Failure
 * publishes nothing: the deployment becomes `failed` with its build log, the
 * session is closed and its team slot released in one transaction, production
 * stays where it was, and this call and every later finalize of the session
 * answer FUNCTIONS_BUILD_FAILED with the log. Returns a result only when a
 * racing finalize settled the session first.
 */
async function buildFunctionsStep(
  session: UploadSessionRecord,
  projectItem: Record<string, unknown>,
  deploymentItem: Record<string, unknown>,
  routeManifest: RouteManifest,
): Promise<{ settled: FinalizeResult } | { emptyBuild: boolean }> {
  if (deploymentItem.functions_built_at) return { emptyBuild: false };
  const table = config.tableName();
  const build = await buildDeploymentFunctions({
    teamId: session.team_id,
    projectId: session.project_id,
    deploymentId: session.deployment_id,
    subdomain: projectItem.subdomain as string,
    rootDirectory: projectItem.root_directory,
    paths: Object.keys(routeManifest.files),
    objectKey: (path) => {
      const key = manifestObjectKey(routeManifest, path, routeManifest.files[path]!);
      if (!key) throw new Error(`route manifest of ${session.deployment_id} names an object outside the project: ${path}`);
      return key;
    },
  });
  const now = new Date().toISOString();
  // No functions: nothing built that a resumed finalize could skip, so the (empty) build is recorded by the commit.
  if (build.ok && build.functions.length === 0 && build.log.length === 0) return { emptyBuild: true };
  if (build.ok) {
    try {
      await dynamo().send(
        new UpdateCommand({
          TableName: table,
          Key: keys.deployment(session.project_id, session.deployment_id),
          UpdateExpression: 'SET build_log = :log, #functions = :functions, functions_built_at = :now',
          ConditionExpression: '#status IN (:uploading, :building)',
          ExpressionAttributeNames: { '#status': 'status', '#functions': 'functions' },
          ExpressionAttributeValues: {
            ':log': build.log,
            ':functions': build.functions.map((f) => f.name),
            ':now': now,
            ':uploading': 'uploading',
            ':building': 'building',
          },
        }),
      );
    } catch (error) {
      // A racing finalize already committed (or failed) this deployment: the commit below finds out.
      if (!isConditionalCheckFailure(error)) throw error;
    }
    return { emptyBuild: false };
  }
  try {
    await dynamo().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: keys.uploadSession(session.upload_id),
              UpdateExpression: 'SET #status = :finalized, finalized_at = :now, outcome = :failed',
              ConditionExpression: '#status = :open',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':finalized': 'finalized', ':open': 'open', ':now': now, ':failed': 'failed' },
            },
          },
          {
            Update: {
              TableName: table,
              Key: keys.deployment(session.project_id, session.deployment_id),
              UpdateExpression: 'SET #status = :failed, build_log = :log, #functions = :none, failed_at = :now',
              ConditionExpression: '#status IN (:uploading, :building)',
              ExpressionAttributeNames: { '#status': 'status', '#functions': 'functions' },
              ExpressionAttributeValues: {
                ':failed': 'failed',
                ':uploading': 'uploading',
                ':building': 'building',
                ':log': build.log,
                ':none': [],
                ':now': now,
              },
            },
          },
          ...releaseUploadSlot(session.team_id, session),
        ],
      }),
    );
  } catch (error) {
    if (!isTransactionCanceled(error)) throw error;
    const current = await getUploadSession(session.upload_id);
    if (current?.status === 'finalized') return { settled: await finalizedResult(current) };
    throw error;
  }
  // Recorded once, by the call that failed the deployment; a repeated finalize only answers with the log.
  await recordDeployFailure(session.team_id, 'FUNCTIONS_BUILD_FAILED');
  throw buildFailed(build.log);
}

export { deletePrefix };
