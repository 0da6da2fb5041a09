import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { finalizeUpload } from '../publishing/publish.ts';
import { ApiError, isApiError } from '../errors/api-error.ts';
import { TEAM_NOT_FOUND } from '../errors/catalogue/accounts.ts';
import { getTeam } from '../teams/teams.ts';
import { beginBuildSession } from '../publishing/begin-build-upload.ts';
import { storeUploadedFiles } from '../publishing/files.ts';
import type { TeamStanding } from '../publishing/sessions.ts';
import type { ProjectItem } from '../projects/records.ts';

/**
 * A successful build's output goes through the very steps of a direct upload
 * (lib/deployments/begin-build-upload.ts): manifest and publishability checks, the
 * team's held blobs, the files the team lacks stored, then finalize (the
 * functions build for production, the route manifest, the commit). Publishing
 * learns nothing of Git: it gets a folder, a deployment and a target.
 */
const HASH_CONCURRENCY = 16;
/** Files handed to one store call (each call checks and stores its files, then records them). */
const STORE_BATCH = 32;

interface OutputFile {
  path: string;
  hash: string;
  size: number;
  absolute: string;
}

/** Output files are read as what they are: a link is never followed (the walk lists regular files only). */
const NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;

async function walk(dir: string, prefix = ''): Promise<{ path: string; absolute: string }[]> {
  const out: { path: string; absolute: string }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const absolute = join(dir, entry.name);
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...(await walk(absolute, path)));
    else if (entry.isFile()) out.push({ path, absolute });
  }
  return out;
}

async function hashFile(absolute: string): Promise<{ hash: string; size: number }> {
  const handle = await open(absolute, NO_FOLLOW);
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let size = 0;
    handle
      .createReadStream()
      .on('data', (chunk) => {
        hash.update(chunk);
        size += chunk.length;
      })
      .on('error', reject)
      .on('end', () => resolve({ hash: hash.digest('hex'), size }));
  });
}

export async function outputFiles(dir: string): Promise<OutputFile[]> {
  const limit = pLimit(HASH_CONCURRENCY);
  const found = await walk(dir);
  return Promise.all(found.map((file) => limit(async () => ({ ...file, ...(await hashFile(file.absolute)) }))));
}

export async function publishBuildOutput(input: {
  project: ProjectItem;
  deploymentId: string;
  target: 'production' | 'preview';
  branch: string;
  outputDir: string;
}): Promise<{ fileCount: number }> {
  const team = await getTeam(input.project.team_id);
  if (!team) throw new ApiError(TEAM_NOT_FOUND);
  const files = await outputFiles(input.outputDir);
  const { session, missing } = await beginBuildSession({
    team: team as unknown as TeamStanding,
    project: input.project,
    deploymentId: input.deploymentId,
    files: files.map(({ path, hash, size }) => ({ path, hash, size })),
    target: input.target,
    branch: input.branch,
  });
  const byHash = new Map(files.map((file) => [file.hash, file]));
  for (let i = 0; i < missing.length; i += STORE_BATCH) {
    const batch = missing.slice(i, i + STORE_BATCH);
    const uploads = await Promise.all(
      batch.map(async (hash) => ({ hash, bytes: await readFile(byHash.get(hash)!.absolute, { flag: NO_FOLLOW }) })),
    );
    await storeUploadedFiles(session, uploads);
  }
  for (;;) {
    try {
      await finalizeUpload(session);
      return { fileCount: files.length };
    } catch (error) {
      // A large output may need more than one finalize call, as a large upload does.
      if (isApiError(error) && error.code === 'PUBLISH_IN_PROGRESS') continue;
      throw error;
    }
  }
}
