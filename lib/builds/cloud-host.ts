import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { extract } from 'tar-stream';
import { codebuildCall } from '../aws/codebuild-lite.ts';
import { s3 } from '../aws/s3.ts';
import { config } from '../config.ts';
import { scriptJob, type BuildHost, type BuildJob, type BuildReport } from './host.ts';

/**
 * The cloud BuildHost (docs/builds.md, "In the cloud"): one CodeBuild build
 * per build, of the platform's project (infra/builds.ts: Node 22 image, the
 * build script, a service role with no permission on the platform's
 * resources). The job, the log, the result, the output archive and the
 * package store travel through presigned URLs of the bundles bucket, as a
 * queued function's task does; the container is told only the job's URL.
 */
export const cloudBuildVariables = {
  /** The CodeBuild project builds run in. */
  projectName: 'BUILDS_CODEBUILD_PROJECT',
} as const;

/** The one variable a build container is started with. */
export const JOB_URL_VARIABLE = 'SLIPWAY_JOB_URL';

/** A build's objects in the bundles bucket (expired by the `builds/` lifecycle rule), and its project's package store. */
export function buildObjectKeys(deploymentId: string, projectId: string) {
  const base = `builds/${deploymentId}`;
  return {
    job: `${base}/job.json`,
    log: `${base}/log.txt`,
    result: `${base}/result.json`,
    output: `${base}/output.tar`,
    store: `build-cache/${projectId}/store.tar`,
  };
}

/** Build states of CodeBuild that mean the container is gone. */
const ENDED = new Set(['FAILED', 'FAULT', 'STOPPED', 'TIMED_OUT', 'SUCCEEDED']);

const handleOf = (deploymentId: string, projectId: string, buildId: string) => `${deploymentId}/${projectId}/${buildId}`;
function parseHandle(handle: string): { deploymentId: string; projectId: string; buildId: string } {
  const [deploymentId, projectId, ...rest] = handle.split('/');
  return { deploymentId: deploymentId!, projectId: projectId!, buildId: rest.join('/') };
}

async function readText(key: string): Promise<string | null> {
  try {
    const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: key }));
    return await reply.Body!.transformToString('utf8');
  } catch (error) {
    if ((error as Error).name === 'NoSuchKey' || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
      return null;
    throw error;
  }
}

/** What the build script needs, and the URLs it may use (each for one object and one method). */
async function jobEnvelope(job: BuildJob) {
  const bucket = config.bucket('bundles');
  const keys = buildObjectKeys(job.deploymentId, job.projectId);
  const expiresIn = Math.ceil(job.budgetMs / 1000) + 1800;
  const sign = (command: GetObjectCommand | PutObjectCommand | DeleteObjectCommand) => getSignedUrl(s3(), command, { expiresIn });
  const [jobDelete, logPut, resultPut, outputPut, cacheGet, cachePut] = await Promise.all([
    sign(new DeleteObjectCommand({ Bucket: bucket, Key: keys.job })),
    sign(new PutObjectCommand({ Bucket: bucket, Key: keys.log })),
    sign(new PutObjectCommand({ Bucket: bucket, Key: keys.result })),
    sign(new PutObjectCommand({ Bucket: bucket, Key: keys.output })),
    sign(new GetObjectCommand({ Bucket: bucket, Key: keys.store })),
    sign(new PutObjectCommand({ Bucket: bucket, Key: keys.store })),
  ]);
  return {
    job: scriptJob(job),
    urls: {
      job_delete: jobDelete,
      log_put: logPut,
      result_put: resultPut,
      output_put: outputPut,
      cache_get: cacheGet,
      cache_put: cachePut,
    },
  };
}

/** Unpacks the output archive: regular files and folders only, every path inside `dir`. */
async function unpack(body: Readable, dir: string): Promise<void> {
  const tar = extract();
  const done = new Promise<void>((resolve, reject) => {
    tar.on('entry', (header, stream, next) => {
      const path = normalize(header.name).replace(/^(\.\/)+/, '');
      const unsafe = path.startsWith('..') || path.startsWith('/') || path.includes('\0');
      if (unsafe || (header.type !== 'file' && header.type !== 'directory')) {
        stream.resume();
        return void stream.on('end', next);
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: unknown) => void chunks.push(chunk as Buffer));
      stream.on('end', () => {
        const target = join(dir, path);
        const write =
          header.type === 'directory'
            ? mkdir(target, { recursive: true })
            : mkdir(dirname(target), { recursive: true }).then(() => writeFile(target, Buffer.concat(chunks)));
        write.then(() => next(), reject);
      });
    });
    tar.on('finish', resolve);
    tar.on('error', reject);
  });
  body.pipe(tar);
  await done;
}

export function createCloudBuildHost(): BuildHost {
  const projectName = () => {
    const name = config.buildsCodebuildProject();
    if (!name) throw new Error(`${cloudBuildVariables.projectName} is not set`);
    return name;
  };
  const outputDirOf = (deploymentId: string) => join(tmpdir(), 'slipway-builds', deploymentId);
  return {
    async start(job) {
      const envelope = await jobEnvelope(job);
      const bucket = config.bucket('bundles');
      const keys = buildObjectKeys(job.deploymentId, job.projectId);
      await s3().send(
        new PutObjectCommand({ Bucket: bucket, Key: keys.job, Body: JSON.stringify(envelope), ContentType: 'application/json' }),
      );
      const jobUrl = await getSignedUrl(s3(), new GetObjectCommand({ Bucket: bucket, Key: keys.job }), { expiresIn: 3600 });
      const reply = await codebuildCall<{ build?: { id?: string } }>('StartBuild', {
        projectName: projectName(),
        environmentVariablesOverride: [{ name: JOB_URL_VARIABLE, value: jobUrl, type: 'PLAINTEXT' }],
        timeoutInMinutesOverride: Math.max(5, Math.ceil(job.budgetMs / 60_000) + 5),
      });
      if (!reply.build?.id) throw new Error('StartBuild started no build');
      return handleOf(job.deploymentId, job.projectId, reply.build.id);
    },
    async report(handle, fromLine) {
      const { deploymentId, projectId, buildId } = parseHandle(handle);
      const keys = buildObjectKeys(deploymentId, projectId);
      const [logText, resultText] = await Promise.all([readText(keys.log), readText(keys.result)]);
      const all = logText ? logText.split('\n') : [];
      const lines = all.slice(fromLine);
      if (resultText) return settledReport(JSON.parse(resultText), lines, keys.output, outputDirOf(deploymentId));
      const status = (await codebuildCall<{ builds?: { buildStatus?: string }[] }>('BatchGetBuilds', { ids: [buildId] })).builds?.[0]
        ?.buildStatus;
      return { state: status && ENDED.has(status) ? 'lost' : 'running', lines };
    },
    async stop(handle) {
      await codebuildCall('StopBuild', { id: parseHandle(handle).buildId });
    },
    async release(handle) {
      const { deploymentId, projectId } = parseHandle(handle);
      await rm(outputDirOf(deploymentId), { recursive: true, force: true });
      const keys = buildObjectKeys(deploymentId, projectId);
      await s3()
        .send(new DeleteObjectCommand({ Bucket: config.bucket('bundles'), Key: keys.output }))
        .catch(() => undefined);
    },
  };
}

async function settledReport(
  result: {
    outcome?: string;
    failure_line?: string;
    failure_kind?: 'user' | 'platform';
    commit?: { sha: string; message: string | null } | null;
  },
  lines: string[],
  outputKey: string,
  outputDir: string,
): Promise<BuildReport> {
  const commit = result.commit ?? undefined;
  if (result.outcome !== 'succeeded')
    return {
      state: 'failed',
      lines,
      commit,
      failure: { kind: result.failure_kind ?? 'platform', line: result.failure_line ?? 'The build failed.' },
    };
  await rm(outputDir, { recursive: true, force: true });
  await mkdir(outputDir, { recursive: true });
  const reply = await s3().send(new GetObjectCommand({ Bucket: config.bucket('bundles'), Key: outputKey }));
  await unpack(reply.Body as Readable, outputDir);
  return { state: 'succeeded', lines, commit, outputDir };
}
