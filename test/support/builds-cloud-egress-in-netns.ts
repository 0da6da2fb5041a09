/**
 * Run by test/integration/builds-cloud-egress-netns.test.ts inside its own network namespace: only `lo`, which the
 * parent brings up, with a default route through it (a packet to any other address goes out on loopback and is
 * dropped: a blackhole that never leaves the namespace), an /etc/hosts naming the registries and a resolv.conf
 * pointing at loopback. Starts moto there, starts two cloud builds with the cloud build host, and plays each build's
 * container as the cloud build test does: `node build.mjs all` from the staged image context (infra/build-image.ts),
 * with exactly the environment the recorded build holds. One installs from a registry whose address is blackholed,
 * one from a registry on loopback. Results (each build's report and how long its container ran) go to NETNS_RESULTS.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { stageBuildImage } from '../../infra/build-image.ts';
import { codebuildCall } from '../../lib/aws/codebuild-lite.ts';
import { cloudBuildVariables, createCloudBuildHost } from '../../lib/builds/cloud-host.ts';
import type { BuildJob } from '../../lib/builds/host.ts';
import { startMoto } from '../../lib/local/moto.ts';
import { bucketDefinitions } from '../../lib/resources.ts';
import { staticSite } from './builds.ts';
import { startGitServer } from './git-server.ts';

const moto = await startMoto();
const context = stageBuildImage();
const repo = await startGitServer({ name: 'egress' });
try {
  const suffix = randomBytes(4).toString('hex');
  const bucket = `builds-egress-${suffix}`;
  const projectName = `builds-egress-${suffix}`;
  process.env.AWS_ENDPOINT_URL = moto.endpoint;
  process.env[bucketDefinitions.bundles.envVar] = bucket;
  process.env[cloudBuildVariables.projectName] = projectName;
  await new S3Client({ region: 'us-east-1', endpoint: moto.endpoint, forcePathStyle: true }).send(
    new CreateBucketCommand({ Bucket: bucket }),
  );
  await codebuildCall('CreateProject', {
    name: projectName,
    source: { type: 'NO_SOURCE', location: 'none', buildspec: 'version: 0.2' },
    artifacts: { type: 'NO_ARTIFACTS' },
    environment: { type: 'LINUX_CONTAINER', image: 'slipway-build', computeType: 'BUILD_GENERAL1_SMALL' },
    serviceRole: 'arn:aws:iam::123456789012:role/build',
  });
  const host = createCloudBuildHost();

  /** A site whose one dependency comes from `registry` (lockfile and .npmrc), so `npm ci` must reach it. */
  const siteFrom = (registry: string, branch: string) => {
    const manifest = { name: 'egress-site', version: '1.0.0', private: true, dependencies: { 'left-pad': '1.3.0' } };
    const dependency = {
      version: '1.3.0',
      resolved: `${registry}left-pad/-/left-pad-1.3.0.tgz`,
      integrity: 'sha512-XI5MPzVNApjAyhQzphX8BkmKsKUxD4LdyK24iZeQm2NrxxTfd8BtYj4YdnjdYqPWJ2x+eDN9bK7b8z8oTGNPiA==',
    };
    return repo.commit(branch, {
      ...staticSite(branch),
      '.npmrc': `registry=${registry}\n`,
      'package.json': JSON.stringify({ ...manifest, scripts: { build: 'node build.mjs' } }),
      'package-lock.json': JSON.stringify({
        ...manifest,
        lockfileVersion: 3,
        requires: true,
        packages: { '': manifest, 'node_modules/left-pad': dependency },
      }),
    });
  };

  const job = (commit: string): BuildJob => ({
    deploymentId: randomUUID(),
    projectId: `project-${suffix}`,
    teamId: 'team',
    git: { url: repo.url, commit, ref: 'main', authorization: null, displayUrl: repo.url },
    rootDirectory: null,
    rootPrefix: '',
    packageManager: null,
    buildCommand: '{pm} run build',
    outputDir: 'dist',
    includeFunctions: false,
    env: {},
    budgetMs: 900_000,
    memoryMb: 3072,
    heartbeatMs: 30_000,
  });

  /** Plays the container of the build a handle names: `node build.mjs all` with the recorded environment, nothing else. */
  const playContainer = async (handle: string) => {
    const reply = await codebuildCall<{ builds: { environment: { environmentVariables: { name: string; value: string }[] } }[] }>(
      'BatchGetBuilds',
      { ids: [handle.split('/').slice(2).join('/')] },
    );
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
    for (const { name, value } of reply.builds[0]!.environment.environmentVariables) env[name] = value;
    const started = Date.now();
    const code = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, [join(context, 'build.mjs'), 'all'], { env, stdio: 'ignore' });
      child.on('close', (c) => resolve(c ?? 1));
    });
    return { code, ms: Date.now() - started };
  };

  const build = async (registry: string, branch: string) => {
    const handle = await host.start(job(siteFrom(registry, branch)));
    const container = await playContainer(handle);
    const report = await host.report(handle, 0);
    return { container, state: report.state, failure: report.failure ?? null, lines: report.lines };
  };

  const [blackholed, refused] = await Promise.all([
    build('https://registry.blackhole.test/', 'blackholed'),
    build('https://registry.loopback.test/', 'refused'),
  ]);
  writeFileSync(
    process.env.NETNS_RESULTS!,
    JSON.stringify({
      links: execFileSync('ip', ['-o', 'link', 'show']).toString(),
      routes: execFileSync('ip', ['route']).toString(),
      blackholed,
      refused,
    }),
  );
} finally {
  await repo.close();
  rmSync(context, { recursive: true, force: true });
  await moto.stop();
}
