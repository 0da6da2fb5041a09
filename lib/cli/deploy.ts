import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, readdirSync, realpathSync, statSync, type BigIntStats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, resolve, sep } from 'node:path';
import cliProgress from 'cli-progress';
import pLimit from 'p-limit';
import { MAX_BATCH_BYTES, MAX_BATCH_FILES, MAX_INLINE_FILE_BYTES } from '../plans.ts';
import type { ApiCallError, ApiClient } from './api-client.ts';
import { interactive } from './args.ts';
import { CliError } from './operator-env.ts';
import { functionDependencies } from './function-deps.ts';
import type { SiteFile } from './site-file.ts';
import { HashCache, statFacts } from './hash-cache.ts';
import { multipartForm } from './http.ts';
import { refuseUnbuiltApp } from './publishable.ts';

export type { SiteFile } from './site-file.ts';

/** Folders and files never deployed: VCS data, dependencies, macOS litter. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);
const SKIPPED_FILES = new Set(['.DS_Store']);

/** Files hashed at once: enough to keep the disk busy, few enough to bound open descriptors. */
const HASH_CONCURRENCY = 32;
/** Upload requests in flight at once, by default. */
export const UPLOAD_CONCURRENCY = 8;

/**
 * Every deployable file under `dir`, sorted by path. Symlinked files are followed; symlinked folders are not (no loops).
 * Synchronous on purpose: nothing else runs while the folder is listed, and sync readdir and stat calls on 5,000 files
 * take a fifth of the time the same calls take through promises and the thread pool (about 25 ms against 160 ms on
 * the 2-core bench machine), which is most of what a repeat deploy with a warm hash cache spends on the disk.
 */
export async function listSiteFiles(dir: string): Promise<Omit<SiteFile, 'hash'>[]> {
  const root = resolve(dir);
  const rootStat = statSync(root, { throwIfNoEntry: false });
  if (!rootStat) throw new CliError(`${dir} does not exist.`);
  if (!rootStat.isDirectory()) throw new CliError(`${dir} is not a folder.`);
  const found: Omit<SiteFile, 'hash'>[] = [];
  const walk = (absolute: string, relative: string): void => {
    for (const entry of readdirSync(absolute, { withFileTypes: true })) {
      // Not path.join: its normalizing walk over every character was a fifth of the listing, and both parts are already clean.
      const abs = `${absolute}${sep}${entry.name}`;
      const rel = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) walk(abs, rel);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && !SKIPPED_FILES.has(entry.name)) {
        // stat follows a symlink: one to a file is deployed as that file, one to a folder or nowhere is skipped.
        let info: BigIntStats | undefined;
        try {
          info = statSync(abs, { bigint: true, throwIfNoEntry: false });
        } catch {
          info = undefined;
        }
        if (info?.isFile()) found.push({ path: rel, absolute: abs, size: Number(info.size), facts: statFacts(info) });
      }
    }
  };
  walk(root, '');
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** SHA-256 of a file, read as a stream: memory stays flat whatever the size. */
export function hashFile(absolute: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(absolute, { highWaterMark: 256 * 1024 })
      .on('data', (chunk) => hash.update(chunk as Buffer))
      .on('end', () => resolvePromise(hash.digest('hex')))
      .on('error', reject);
  });
}

/** Files up to this size are read whole and hashed in one call: for the many small files of a site, a stream's setup costs more than the read. */
const WHOLE_READ_MAX_BYTES = 1024 * 1024;

async function hashSmallFile(absolute: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(absolute))
    .digest('hex');
}

/**
 * Every file's hash: from the cache when the file's stat facts are those it was hashed under, else read and
 * hashed (and recorded). `read` counts the files read.
 */
export async function hashSiteFiles(files: Omit<SiteFile, 'hash'>[], cache?: HashCache): Promise<{ files: SiteFile[]; read: number }> {
  const limit = pLimit(HASH_CONCURRENCY);
  let read = 0;
  const hashed = await Promise.all(
    files.map((file) => {
      // A cache hit costs no I/O: answered at once, outside the limit.
      const cached = file.facts && cache?.lookup(file.path, file.facts);
      if (cached) return { ...file, hash: cached };
      return limit(async () => {
        const facts = file.facts ?? (cache ? statFacts(await stat(file.absolute, { bigint: true })) : undefined);
        const hit = !file.facts && facts && cache?.lookup(file.path, facts);
        if (hit) return { ...file, hash: hit };
        const hash = file.size <= WHOLE_READ_MAX_BYTES ? await hashSmallFile(file.absolute) : await hashFile(file.absolute);
        read++;
        if (facts) cache?.record(file.path, facts, hash);
        return { ...file, hash };
      });
    }),
  );
  return { files: hashed, read };
}

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

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

class UploadProgress {
  private bar: cliProgress.SingleBar | null = null;
  private files = 0;
  private bytes = 0;
  private readonly started = Date.now();

  constructor(
    private readonly out: NodeJS.WriteStream | undefined,
    private readonly totalFiles: number,
    private readonly totalBytes: number,
  ) {}

  start(known: number): void {
    if (!this.out) return;
    if (interactive(this.out) && this.totalFiles > 0) {
      this.bar = new cliProgress.SingleBar(
        {
          stream: this.out,
          format: 'Uploading [{bar}] {percentage}% | {value}/{total} files | {sent}/{size}',
          hideCursor: true,
          clearOnComplete: false,
        },
        cliProgress.Presets.shades_classic,
      );
      this.bar.start(this.totalFiles, 0, { sent: mb(0), size: mb(this.totalBytes) });
    } else {
      this.out.write(`Uploading ${this.totalFiles} files (${mb(this.totalBytes)}); ${known} already on the platform.\n`);
    }
  }

  fileSent(size: number): void {
    this.files++;
    this.bytes += size;
    this.bar?.update(this.files, { sent: mb(this.bytes) });
  }

  stop(): void {
    if (!this.out) return;
    if (this.bar) this.bar.stop();
    else this.out.write(`Uploaded ${this.files} files (${mb(this.bytes)}) in ${((Date.now() - this.started) / 1000).toFixed(1)} s.\n`);
  }
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

/** Files this small travel in batches; a larger one gets a PUT of its own. */
const BATCH_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Sends files to an upload session: small ones many to a request
 * (POST .../files, multipart), larger ones one to a PUT, the largest straight
 * to storage by upload URL; a bounded number at once. A retried request sends
 * its files again from the disk.
 */
class FileSender {
  filesSent = 0;
  bytesSent = 0;
  private readonly limit;

  constructor(
    private readonly api: ApiClient,
    private readonly uploadId: string,
    concurrency: number | undefined,
    private readonly progress: UploadProgress,
  ) {
    this.limit = pLimit(Math.max(1, concurrency ?? UPLOAD_CONCURRENCY));
  }

  async send(files: SiteFile[]): Promise<void> {
    const requests: SiteFile[][] = [];
    let batch: SiteFile[] = [];
    let batchBytes = 0;
    for (const file of files) {
      if (file.size > BATCH_FILE_MAX_BYTES) {
        requests.push([file]);
        continue;
      }
      if (batch.length === MAX_BATCH_FILES || batchBytes + file.size > MAX_BATCH_BYTES) {
        requests.push(batch);
        batch = [];
        batchBytes = 0;
      }
      batch.push(file);
      batchBytes += file.size;
    }
    if (batch.length > 0) requests.push(batch);
    const base = `/api/v1/uploads/${encodeURIComponent(this.uploadId)}/files`;
    try {
      await Promise.all(
        requests.map((group) =>
          this.limit(async () => {
            if (group.length === 1 && group[0]!.size > MAX_INLINE_FILE_BYTES) {
              // Too large for the API (lib/plans.ts): straight to storage by upload URL, then checked.
              const file = group[0]!;
              const target = await this.api.call<{ url: string; headers: Record<string, string> }>(
                'POST',
                `${base}/${file.hash}/upload-url`,
                { json: {} },
              );
              await this.api.putToStorage(target.url, target.headers, () => createReadStream(file.absolute));
              await this.api.call('POST', `${base}/${file.hash}/complete`, { json: {} });
            } else if (group.length === 1 && group[0]!.size > BATCH_FILE_MAX_BYTES) {
              const file = group[0]!;
              await this.api.call('PUT', `${base}/${file.hash}`, {
                headers: { 'content-type': 'application/octet-stream', 'content-length': String(file.size) },
                // A fresh stream per attempt: a retried upload reads the file again from the start.
                body: () => ({ body: createReadStream(file.absolute) }),
              });
            } else {
              // Read from the disk when sent, again on a retry.
              await this.api.call('POST', base, {
                body: async () => {
                  const form = await multipartForm(group.map((file) => ({ name: file.hash, absolute: file.absolute })));
                  return { body: form.body, headers: { 'content-type': form.contentType } };
                },
              });
            }
            for (const file of group) {
              this.filesSent++;
              this.bytesSent += file.size;
              this.progress.fileSent(file.size);
            }
          }),
        ),
      );
    } finally {
      this.limit.clearQueue();
    }
  }
}

/**
 * `slipway deploy DIR`: hash, begin the upload (new project or an existing
 * one), send only the files the platform lacks, finalize.
 */
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

export async function deploySite(api: ApiClient, options: DeployOptions): Promise<DeploySummary & { functionSources: boolean }> {
  const out = options.quiet ? undefined : options.progress;
  let mark = performance.now();
  const lap = () => {
    const now = performance.now();
    const ms = Math.round(now - mark);
    mark = now;
    return ms;
  };
  // Before the first stat: a file changed after this instant is never trusted to the cache (the racy rule).
  const scanStartedMs = Date.now();
  const listed = await listSiteFiles(options.dir);
  if (listed.length === 0) throw new CliError(`${options.dir} has no files to deploy.`);
  refuseUnbuiltApp(options.dir, options.dir);
  // node_modules/ is skipped, except the files the functions import (lib/cli/function-deps.ts), found where the
  // platform's build looks: inside the project's root directory when it has one (asked only of a folder that
  // has a functions/ folder somewhere; a new project has none).
  const rootDirectory = options.projectId && mayHaveFunctions(listed) ? await projectRootDirectory(api, options.projectId) : null;
  const dependencies = await functionDependencies(options.dir, rootDirectory);
  for (const warning of dependencies.warnings) out?.write(`${warning}\n`);
  if (dependencies.files.length > 0) {
    listed.push(...dependencies.files);
    listed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
  let root = resolve(options.dir);
  try {
    root = realpathSync(root);
  } catch {
    // Keep the resolved path.
  }
  const cache = options.hashCache === false ? undefined : HashCache.open(root, scanStartedMs);
  out?.write(`Hashing ${listed.length} files...\n`);
  const { files, read: filesHashed } = await hashSiteFiles(listed, cache);
  const manifest = files.map(({ path, hash, size }) => ({ path, hash, size }));
  const hashMs = lap();

  // One key for this deploy: a begin retried after a lost answer returns the same session and project.
  const idempotency = { 'idempotency-key': randomUUID() };
  const body: Record<string, unknown> = { files: manifest, ...(options.label ? { label: options.label } : {}) };
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

  const beginMs = lap();
  const byHash = new Map<string, SiteFile>();
  for (const file of files) if (!byHash.has(file.hash)) byHash.set(file.hash, file);
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

  const uploadMs = lap();
  let finalized: Finalized;
  try {
    finalized = await finalizeUpload(api, session.upload_id);
  } catch (error) {
    // Bytes the team held at begin can be gone by finalize (their project was deleted meanwhile):
    // finalize names them, and they are sent like any missing file.
    const resend =
      (error as ApiCallError).code === 'UPLOAD_INCOMPLETE'
        ? ((error as ApiCallError).details as { missing?: unknown } | null)?.missing
        : null;
    if (!Array.isArray(resend) || resend.length === 0) throw error;
    await sender.send(resend.map((hash) => byHash.get(String(hash))).filter((file): file is SiteFile => file !== undefined));
    finalized = await finalizeUpload(api, session.upload_id);
  }
  return {
    project_id: finalized.project_id ?? session.project_id,
    deployment_id: finalized.deployment_id ?? session.deployment_id,
    upload_id: session.upload_id,
    url: finalized.url ?? finalized.production_url ?? session.project?.production_url ?? '',
    files_total: files.length,
    bytes_total: files.reduce((sum, f) => sum + f.size, 0),
    files_hashed: filesHashed,
    functionSources: mayHaveFunctions(files),
    files_sent: sender.filesSent,
    bytes_sent: sender.bytesSent,
    known_count: session.known_count,
    timings_ms: { hash: hashMs, begin: beginMs, upload: uploadMs, finalize: lap() },
  };
}
