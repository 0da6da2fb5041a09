import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { stageBuildImage } from '../../infra/build-image.ts';
import { codebuildCall } from '../../lib/aws/codebuild-lite.ts';
import { buildObjectKeys, cloudBuildVariables, createCloudBuildHost, JOB_URL_VARIABLE } from '../../lib/builds/cloud-host.ts';
import type { BuildJob, BuildReport } from '../../lib/builds/host.ts';
import { bucketDefinitions } from '../../lib/resources.ts';
import { staticSite } from '../support/builds.ts';
import { startGitServer, type GitServer } from '../support/git-server.ts';

/**
 * The cloud build host (lib/builds/cloud-host.ts) against the shared
 * moto_server: moto records StartBuild (with the environment it was started
 * with, lib/local/moto-python/sitecustomize.py), BatchGetBuilds and StopBuild
 * but runs no container, so the test plays the container: it runs the build
 * script's `all` mode, from the image's staged context (infra/build-image.ts),
 * as a child process with exactly the environment the recorded build holds (a
 * presigned URL of the moto bucket). No SDK is mocked.
 * Real CodeBuild is not exercised.
 */
vi.setConfig({ testTimeout: 120_000 });
const endpoint = inject('awsEndpoint');
const suffix = randomBytes(4).toString('hex');
const bucket = `builds-cloud-${suffix}`;
const projectName = `builds-${suffix}`;
const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true });
let repo: GitServer;
let imageContext: string;

beforeAll(async () => {
  process.env.AWS_ENDPOINT_URL = endpoint;
  process.env[bucketDefinitions.bundles.envVar] = bucket;
  process.env[cloudBuildVariables.projectName] = projectName;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  await codebuildCall('CreateProject', {
    name: projectName,
    // moto asks a location even of a NO_SOURCE project (CodeBuild does not).
    source: { type: 'NO_SOURCE', location: 'none', buildspec: 'version: 0.2' },
    artifacts: { type: 'NO_ARTIFACTS' },
    environment: { type: 'LINUX_CONTAINER', image: 'slipway-build', computeType: 'BUILD_GENERAL1_SMALL' },
    serviceRole: 'arn:aws:iam::123456789012:role/build',
  });
  repo = await startGitServer({ name: 'cloud' });
  imageContext = stageBuildImage();
});

afterAll(async () => {
  await repo?.close();
  if (imageContext) rmSync(imageContext, { recursive: true, force: true });
});

function job(commit: string, overrides: Partial<BuildJob> = {}): BuildJob {
  return {
    deploymentId: randomUUID(),
    projectId: `project-${suffix}`,
    teamId: 'team',
    git: { url: repo.url, commit, ref: 'main', authorization: null, displayUrl: repo.url },
    rootDirectory: null,
    rootPrefix: '',
    packageManager: null,
    buildCommand: '{pm} run build',
    outputDir: 'dist',
    includeFunctions: true,
    env: { API_TOKEN: 'cloud-secret-42' },
    budgetMs: 60_000,
    memoryMb: 3072,
    heartbeatMs: 30_000,
    ...overrides,
  };
}

/** What BatchGetBuilds reports of the build a handle names (the handle ends with CodeBuild's build id). */
async function recordedBuild(handle: string) {
  const id = handle.split('/').slice(2).join('/');
  const reply = await codebuildCall<{
    builds: {
      id: string;
      buildStatus: string;
      projectName: string;
      environment: { environmentVariables: { name: string; value: string }[] };
    }[];
  }>('BatchGetBuilds', { ids: [id] });
  return reply.builds[0]!;
}

/** Plays the build container: `node build.mjs all` with the recorded environment, nothing else. */
function playContainer(variables: { name: string; value: string }[]): Promise<number> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
  for (const { name, value } of variables) env[name] = value;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(imageContext, 'build.mjs'), 'all'], { env, stdio: 'ignore' });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

async function settle(host: ReturnType<typeof createCloudBuildHost>, handle: string): Promise<BuildReport & { all: string[] }> {
  const all: string[] = [];
  for (;;) {
    const report = await host.report(handle, all.length);
    all.push(...report.lines);
    if (report.state !== 'running') return { ...report, all };
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('builds in CodeBuild', () => {
  it('starts a build with only the job URL, takes the log, result and output through presigned URLs, and keeps the store warm', async () => {
    const host = createCloudBuildHost();
    const sha = repo.commit('main', staticSite('cloud'), 'Cloud build');
    const first = job(sha);
    const handle = await host.start(first);
    const recorded = await recordedBuild(handle);
    expect(recorded.projectName).toBe(projectName);
    expect(recorded.buildStatus).toBe('IN_PROGRESS');
    expect(recorded.environment.environmentVariables.map((v) => v.name)).toEqual([JOB_URL_VARIABLE]);
    expect(recorded.environment.environmentVariables[0]!.value).toMatch(/^http:\/\/.*X-Amz-Signature=/);
    expect((await host.report(handle, 0)).state).toBe('running');

    expect(await playContainer(recorded.environment.environmentVariables)).toBe(0);
    const report = await settle(host, handle);
    expect(report.state, report.all.join('\n')).toBe('succeeded');
    expect(report.commit).toEqual({ sha, message: 'Cloud build' });
    expect(report.all).toContain('building with API_TOKEN=***');
    expect(report.all.join('\n')).not.toContain('cloud-secret-42');
    expect(report.all.find((l) => l.startsWith('Package cache:'))).toMatch(/^Package cache: cold /);
    expect(readFileSync(join(report.outputDir!, 'index.html'), 'utf8')).toBe('<h1>cloud no greeting</h1>');
    // The job carried the fetch credential: the container deleted it as soon as it read it.
    await expect(
      s3.send(new GetObjectCommand({ Bucket: bucket, Key: buildObjectKeys(first.deploymentId, first.projectId).job })),
    ).rejects.toThrow();
    await host.release(handle);
    expect(existsSync(report.outputDir!)).toBe(false);

    const again = await host.start(job(repo.commit('main', staticSite('cloud 2'))));
    expect(await playContainer((await recordedBuild(again)).environment.environmentVariables)).toBe(0);
    const warm = await settle(host, again);
    expect(warm.all.find((l) => l.startsWith('Package cache:'))).toMatch(/^Package cache: warm /);
    await host.release(again);
  });

  it('reports a failed build with its classified line, and a stopped build with no result as lost', async () => {
    const host = createCloudBuildHost();
    const failing = await host.start(job(repo.commit('main', { 'build.mjs': "console.error('Error: nope'); process.exit(3);" })));
    expect(await playContainer((await recordedBuild(failing)).environment.environmentVariables)).toBe(0);
    const failed = await settle(host, failing);
    expect(failed.state).toBe('failed');
    expect(failed.failure).toEqual({ kind: 'user', line: 'Build failed: `npm run build` exited with code 3: Error: nope' });

    const stopped = await host.start(job(repo.commit('main', staticSite('never'))));
    await host.stop(stopped);
    expect((await recordedBuild(stopped)).buildStatus).toBe('STOPPED');
    expect((await host.report(stopped, 0)).state).toBe('lost');
  });
});
