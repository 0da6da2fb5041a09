import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { rootPrefix } from '../sites/root-directory.ts';
import type { ApiCallError, ApiClient } from './api-client.ts';
import { hashSiteFiles } from './file-hashing.ts';
import { FileSender } from './file-sender.ts';
import { functionDependencies } from './function-deps.ts';
import { findFunctionSources, fromAppLine } from './function-sources.ts';
import { HashCache } from './hash-cache.ts';
import { CliError } from './operator-env.ts';
import { refuseUnpublishable } from './publishable.ts';
import type { SiteFile } from './site-file.ts';
import { listSiteFiles } from './site-listing.ts';
import { UploadProgress } from './upload-progress.ts';
import { type JsonObject } from '../json.ts';

export interface UploadSession {
  upload_id: string;
  deployment_id: string;
  project_id: string;
  project?: { id: string; name: string; subdomain: string; production_url: string };
  expires_at: string;
  known_count: number;
  missing: string[];
  total_bytes_to_send: number;
}

export interface DeploySummary {
  project_id: string;
  deployment_id: string;
  upload_id: string;
  url: string;
  files_total: number;
  bytes_total: number;
  /** Files read and hashed; the others' hashes came from the folder's hash cache (lib/cli/hash-cache.ts). */
  files_hashed: number;
  /** Files (unique contents) the platform did not hold and that this deploy sent. */
  files_sent: number;
  bytes_sent: number;
  known_count: number;
  /** Wall time of each step, for the benchmark and for anyone asking where the time went. */
  timings_ms: { hash: number; begin: number; upload: number; finalize: number };
}

export interface DeployOptions {
  dir: string;
  projectId?: string | null;
  name?: string;
  subdomain?: string;
  label?: string;
  concurrency?: number;
  /** Where progress goes: a bar for a person at a terminal (lib/cli/args.ts interactive), plain lines otherwise. */
  progress?: NodeJS.WriteStream;
  quiet?: boolean;
  /** Reuse and keep the folder's file hashes (lib/cli/hash-cache.ts); default true. */
  hashCache?: boolean;
  /** Called once begin-upload answered: the project exists from then on, whatever happens to this deploy. */
  onBegin?: (session: UploadSession) => void;
}

interface Finalized {
  deployment_id: string;
  project_id: string;
  url?: string;
  production_url?: string;
}

/**
 * Finalize publishes a large deployment over several calls (503 PUBLISH_IN_PROGRESS with the
 * count published so far). The retry policy bounds attempts that fail; a publish that keeps
 * moving forward is followed to the end, whatever the number of calls.
 */
export async function finalizeUpload(api: ApiClient, uploadId: string): Promise<Finalized> {
  let lastCount = -1;
  for (;;) {
    try {
      return await api.call<Finalized>('POST', `/api/v1/uploads/${encodeURIComponent(uploadId)}/finalize`, { json: {} });
    } catch (error) {
      const count =
        (error as ApiCallError).code === 'PUBLISH_IN_PROGRESS'
          ? Number(((error as ApiCallError).details as { published_count?: unknown } | null)?.published_count)
          : NaN;
      if (!Number.isFinite(count) || count <= lastCount) throw error;
      lastCount = count;
    }
  }
}

/**
 * Whether a manifest can hold function sources: a `functions/` folder at the top or under a
 * root directory (lib/functions/build.ts). A site without one has no live functions to list.
 */
export const mayHaveFunctions = (files: { path: string }[]) =>
  files.some((f) => f.path.startsWith('functions/') || f.path.includes('/functions/'));

async function projectRootDirectory(api: ApiClient, projectId: string): Promise<string | null> {
  const project = await api.call<{ root_directory?: string | null }>('GET', `/api/v1/projects/${encodeURIComponent(projectId)}`);
  return project.root_directory ?? null;
}

/**
 * Adds what the platform builds the functions from: the app's functions/ when the folder is a build folder
 * without its own (lib/cli/function-sources.ts, the lookup `slipway dev` uses), and the node_modules files
 * the functions import.
 */
async function addFunctionSources(
  dir: string,
  rootDirectory: string | null,
  listed: Omit<SiteFile, 'hash'>[],
  out: NodeJS.WriteStream | undefined,
): Promise<void> {
  const sources = findFunctionSources(dir, rootPrefix(rootDirectory));
  if (!sources) return;
  if (sources.fromApp) {
    out?.write(`${fromAppLine(dir, sources)}\n`);
    const functions = await listSiteFiles(join(sources.base, 'functions'));
    listed.push(...functions.map((file) => ({ ...file, path: `functions/${file.path}` })));
  }
  const dependencies = await functionDependencies(sources.base);
  for (const warning of dependencies.warnings) out?.write(`${warning}\n`);
  const root = sources.fromApp ? '' : rootPrefix(rootDirectory);
  listed.push(...dependencies.files.map((file) => ({ ...file, path: `${root}${file.path}` })));
  listed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

type Deployed = DeploySummary & ReturnType<typeof followUps>;

/** What the deploy asks the platform afterwards: the function URLs, what publishing skipped of the rules files. */
const followUps = (files: { path: string }[]) => ({
  functionSources: mayHaveFunctions(files),
  rulesFiles: files.some((f) => f.path === '_redirects' || f.path === '_headers'),
});

/**
 * `slipway deploy DIR`: hash, begin the upload (new project or an existing
 * one), send only the files the platform lacks, finalize.
 */
export async function deploySite(api: ApiClient, options: DeployOptions): Promise<Deployed> {
  const out = options.quiet ? undefined : options.progress;
  let mark = performance.now();
  const lap = () => {
    const now = performance.now();
    const ms = Math.round(now - mark);
    mark = now;
    return ms;
  };
  const { files, filesHashed, cache } = await hashDeployFiles(api, options, out);
  const hashMs = lap();
  const session = await beginUpload(api, options, files, cache);
  const beginMs = lap();
  const byHash = new Map<string, SiteFile>();
  for (const file of files) if (!byHash.has(file.hash)) byHash.set(file.hash, file);
  const sender = await sendMissing(api, options, session, byHash, out);
  const uploadMs = lap();
  const finalized = await finalizeResending(api, session, sender, byHash);
  return {
    project_id: finalized.project_id ?? session.project_id,
    deployment_id: finalized.deployment_id ?? session.deployment_id,
    upload_id: session.upload_id,
    url: finalized.url ?? finalized.production_url ?? session.project?.production_url ?? '',
    files_total: files.length,
    bytes_total: files.reduce((sum, f) => sum + f.size, 0),
    files_hashed: filesHashed,
    ...followUps(files),
    files_sent: sender.filesSent,
    bytes_sent: sender.bytesSent,
    known_count: session.known_count,
    timings_ms: { hash: hashMs, begin: beginMs, upload: uploadMs, finalize: lap() },
  };
}

/** The folder's files (and the functions' sources) with their hashes, from the hash cache where it may be trusted. */
async function hashDeployFiles(api: ApiClient, options: DeployOptions, out: NodeJS.WriteStream | undefined) {
  // Before the first stat: a file changed after this instant is never trusted to the cache (the racy rule).
  const scanStartedMs = Date.now();
  const listed = await listSiteFiles(options.dir);
  if (listed.length === 0) throw new CliError(`${options.dir} has no files to deploy.`);
  refuseUnpublishable(options.dir, listed);
  // node_modules/ is skipped, except the files the functions import (lib/cli/function-deps.ts), found where the
  // platform's build looks: inside the project's root directory when it has one (asked only of a folder that
  // has a functions/ folder somewhere; a new project has none).
  const rootDirectory = options.projectId && mayHaveFunctions(listed) ? await projectRootDirectory(api, options.projectId) : null;
  await addFunctionSources(options.dir, rootDirectory, listed, out);
  let root = resolve(options.dir);
  try {
    root = realpathSync(root);
  } catch {
    // Keep the resolved path.
  }
  const cache = options.hashCache === false ? undefined : HashCache.open(root, scanStartedMs);
  out?.write(`Hashing ${listed.length} files...\n`);
  const { files, read: filesHashed } = await hashSiteFiles(listed, cache);
  return { files, filesHashed, cache };
}

/** Begin-upload, for a new project or an existing one; the hash cache is saved meanwhile. */
async function beginUpload(
  api: ApiClient,
  options: DeployOptions,
  files: SiteFile[],
  cache: HashCache | undefined,
): Promise<UploadSession> {
  const manifest = files.map(({ path, hash, size }) => ({ path, hash, size }));
  // One key for this deploy: a begin retried after a lost answer returns the same session and project.
  const idempotency = { 'idempotency-key': randomUUID() };
  const body: JsonObject = { files: manifest, ...(options.label ? { label: options.label } : {}) };
  const begin = options.projectId
    ? api.call<UploadSession>('POST', `/api/v1/projects/${encodeURIComponent(options.projectId)}/uploads`, {
        json: body,
        headers: idempotency,
      })
    : api.call<UploadSession>('POST', '/api/v1/uploads', {
        json: {
          ...body,
          project: {
            name: options.name ?? basename(resolve(options.dir)),
            ...(options.subdomain ? { subdomain: options.subdomain } : {}),
          },
        },
        headers: idempotency,
      });
  // The hash cache is written while the platform works on the begin (10 ms lets the request leave), not
  // before it: a 5,000-file cache is about a megabyte of JSON. Written whether or not this deploy goes
  // through, since the hashes are right either way.
  begin.catch(() => undefined);
  if (cache) await new Promise<void>((resolve) => setTimeout(() => resolve(cache.save()), 10));
  const session = await begin;
  options.onBegin?.(session);
  return session;
}

/** Sends the files the platform lacks, with a progress bar or lines. */
async function sendMissing(
  api: ApiClient,
  options: DeployOptions,
  session: UploadSession,
  byHash: Map<string, SiteFile>,
  out: NodeJS.WriteStream | undefined,
): Promise<FileSender> {
  const toSend = session.missing.map((hash) => {
    const file = byHash.get(hash);
    if (!file) throw new CliError(`The platform asked for a file this deploy does not have (${hash}).`);
    return file;
  });
  const bytesToSend = toSend.reduce((sum, f) => sum + f.size, 0);
  const progress = new UploadProgress(out, toSend.length, bytesToSend);
  progress.start(session.known_count);
  const sender = new FileSender(api, session.upload_id, options.concurrency, progress);
  try {
    await sender.send(toSend);
  } finally {
    progress.stop();
  }
  return sender;
}

/** Finalize; the files it names as gone since begin are sent again, once, and it is asked again. */
async function finalizeResending(
  api: ApiClient,
  session: UploadSession,
  sender: FileSender,
  byHash: Map<string, SiteFile>,
): Promise<Finalized> {
  try {
    return await finalizeUpload(api, session.upload_id);
  } catch (error) {
    // Bytes the team held at begin can be gone by finalize (their project was deleted meanwhile):
    // finalize names them, and they are sent like any missing file.
    const resend =
      (error as ApiCallError).code === 'UPLOAD_INCOMPLETE'
        ? ((error as ApiCallError).details as { missing?: unknown } | null)?.missing
        : null;
    if (!Array.isArray(resend) || resend.length === 0) throw error;
    await sender.send(resend.map((hash) => byHash.get(String(hash))).filter((file): file is SiteFile => file !== undefined));
    return await finalizeUpload(api, session.upload_id);
  }
}
