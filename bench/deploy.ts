import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createApiKey } from '../lib/identity/credential-records.ts';
import { createUser } from '../lib/users/user-records.ts';
import { repoRoot } from '../lib/local/api-server.ts';
import { startLocalPlatform } from '../lib/local/platform.ts';
import { localParts } from '../lib/local/wiring.ts';
import { createTeam } from '../lib/teams/teams.ts';
import { scanCachePrefix } from '../lib/abuse/scan-cache.ts';
import { scanDeploymentFiles } from '../lib/abuse/scans.ts';
import { getObject, putObject } from '../lib/aws/s3-lite.ts';
import { config } from '../lib/config.ts';
import { getProjectItem } from '../lib/projects/records.ts';

/**
 * The deploy figures of the sites issue: a generated site of 5,000 files
 * (about 50 MB, mixed sizes) deployed with the CLI to a local platform with
 * its own moto_server, then deployed again after changing one file (five
 * times, one change each: the target is judged on the median and on the
 * first repeat alone); and, in
 * the same run against the same endpoint, `aws s3 sync` of the same folder
 * into a fresh bucket. The CLI runs as installed: the `bin` of package.json
 * (dist/cli.mjs, built here first), with a hash cache of its own. Targets
 * (issue 12): first deploy at most 1.0x s3 sync; the second sends one file,
 * reads only that file, and takes at most 0.5 s and at most 0.03 of the first.
 */

const FILES = Number(process.env.BENCH_DEPLOY_FILES ?? 5000);
/** Repeat deploys timed (the second-deploy target is judged on their median). */
const REPEATS = Number(process.env.BENCH_DEPLOY_REPEATS ?? 5);

/** Mixed sizes adding up to about 10 KB a file: many small pages and assets, some images. */
function sizeOf(i: number): number {
  const r = (i * 2654435761) % 1000; // spread deterministically
  if (i % 10 < 6) return 500 + r * 3; // 0.5-3.5 KB: pages, styles, scripts
  if (i % 10 < 9) return 8_000 + r * 8; // 8-16 KB
  return 40_000 + r * 25; // 40-65 KB: images
}

function generateSite(dir: string, count: number): { bytes: number; changeable: string } {
  let bytes = 0;
  const ext = ['html', 'css', 'js', 'svg', 'png', 'json', 'woff2', 'txt'];
  writeFileSync(join(dir, 'index.html'), '<!doctype html><h1>Bench</h1>');
  bytes += 29;
  for (let i = 1; i < count; i++) {
    const folder = join(dir, `section-${i % 50}`, `part-${i % 7}`);
    mkdirSync(folder, { recursive: true });
    const size = sizeOf(i);
    writeFileSync(join(folder, `file-${i}.${ext[i % ext.length]}`), randomBytes(size));
    bytes += size;
  }
  return { bytes, changeable: join(dir, 'section-1', 'part-1', 'file-1.css') };
}

/** Runs a command through bench/timed-run.mjs, which times it from a process of its own (it says why). */
function run(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bench', 'timed-run.mjs'), command, ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let timed = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (c: Buffer) => (timed += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number.parseFloat(timed);
      if (!Number.isFinite(ms)) reject(new Error(`${command} was not timed: ${stderr}`));
      else resolve({ code: code ?? -1, stdout, stderr, seconds: ms / 1000 });
    });
  });
}

const steps = (t: Record<string, number>, unit: 's' | 'ms' = 's') =>
  Object.entries(t)
    .map(([step, ms]) => (unit === 's' ? `${step} ${(ms / 1000).toFixed(1)} s` : `${step} ${ms} ms`))
    .join(', ');

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const scanCacheKey = (teamId: string, projectId: string) => `${scanCachePrefix(teamId, projectId)}blobs.json`;

async function readScanCache(teamId: string, projectId: string): Promise<string> {
  return (await getObject(config.bucket('bundles'), scanCacheKey(teamId, projectId))).transformToString();
}

/**
 * The keyword scan of the last one-file redeploy, timed both ways in this run: reading every text file within
 * the caps (as before results were carried forward), and carrying forward what the scans before it kept (the
 * state the worker found, put back first: the worker has scanned this deployment since).
 */
async function timeKeywordScans(input: { teamId: string; projectId: string; deploymentId: string; kept: string }): Promise<void> {
  const project = (await getProjectItem(input.projectId, true))!;
  const target = { team_id: input.teamId, project_id: input.projectId, slug: project.slug as string, deployment_id: input.deploymentId };
  let started = performance.now();
  const full = await scanDeploymentFiles(target, { reuse: false });
  const fullMs = performance.now() - started;
  const key = scanCacheKey(input.teamId, input.projectId);
  await putObject({ bucket: config.bucket('bundles'), key, body: input.kept, contentType: 'application/json' });
  started = performance.now();
  const carried = await scanDeploymentFiles(target, { reuse: true });
  const carriedMs = performance.now() - started;
  const same = JSON.stringify({ ...full, files_read: 0 }) === JSON.stringify({ ...carried, files_read: 0 });
  console.log(
    `keyword scan of the one-file redeploy (${full.files_scanned} text files scanned, ` +
      `caps ${full.truncated ? 'reached' : 'not reached'}): ` +
      `reading every file ${fullMs.toFixed(0)} ms (${full.files_read} read), carrying earlier results forward ${carriedMs.toFixed(0)} ms ` +
      `(${carried.files_read} read); same result: ${same ? 'yes' : 'NO'}`,
  );
}

/** aws s3 sync of the same folder into a fresh bucket on the same endpoint: what the deploy is compared with. */
async function timeS3Sync(site: string, awsEndpoint: string, bytes: number): Promise<{ seconds: number }> {
  const awsEnv = {
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ENDPOINT_URL: awsEndpoint,
  };
  const bucket = `bench-sync-${randomBytes(4).toString('hex')}`;
  const mkBucket = await run('aws', ['--endpoint-url', awsEndpoint, 's3', 'mb', `s3://${bucket}`], awsEnv);
  if (mkBucket.code !== 0) throw new Error(`aws s3 mb failed: ${mkBucket.stderr}`);
  const sync = await run('aws', ['--endpoint-url', awsEndpoint, 's3', 'sync', site, `s3://${bucket}`, '--only-show-errors'], awsEnv);
  if (sync.code !== 0) throw new Error(`aws s3 sync failed: ${sync.stderr}`);
  console.log(`aws s3 sync:     ${sync.seconds.toFixed(1)} s (${FILES} files, ${mb(bytes)})`);
  return sync;
}

/** The installed CLI (package.json's bin, built as `npm install` builds it), run against the platform with a token. */
function installedCli(work: string, baseUrl: string, token: string) {
  const cliEnv = {
    SLIPWAY_API_URL: baseUrl,
    SLIPWAY_TOKEN: token,
    XDG_CONFIG_HOME: join(work, 'config'),
    XDG_CACHE_HOME: join(work, 'cache'),
  };
  execFileSync(process.execPath, [join(repoRoot, 'bin', 'build-cli.mjs')]);
  const bin = join(
    repoRoot,
    (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: { slipway: string } }).bin.slipway,
  );
  return (args: string[]) => run(process.execPath, [bin, ...args], cliEnv);
}

export async function runDeployBench(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'slipway-bench-deploy-'));
  const site = join(work, 'site');
  mkdirSync(site);
  const { bytes, changeable } = generateSite(site, FILES);
  console.log(`site: ${FILES} files, ${mb(bytes)} in ${site}`);

  const parts = localParts();
  const drivers = parts.drivers.map((make) => make());
  const platform = await startLocalPlatform({
    port: 0,
    prefix: `bench${randomBytes(3).toString('hex')}`,
    hostnameHandlers: parts.hostnameHandlers,
    drivers: drivers.map((driver) => () => driver),
  });
  try {
    const user = await createUser({ email: `bench-${randomUUID()}@example.test`, name: 'Bench' });
    const team = await createTeam({ name: `Bench ${randomBytes(3).toString('hex')}`, ownerUserId: user.user_id });
    const token = await createApiKey(team.id);
    const sync = await timeS3Sync(site, platform.awsEndpoint, bytes);

    const cli = installedCli(work, platform.baseUrl, token);
    const first = await cli(['deploy', site, '--subdomain', `bench-${randomBytes(3).toString('hex')}`, '--json']);
    if (first.code !== 0) throw new Error(`first deploy failed: ${first.stderr}`);
    const one = JSON.parse(first.stdout) as {
      files_sent: number;
      bytes_sent: number;
      project_id: string;
      timings_ms: Record<string, number>;
    };
    console.log(
      `deploy (first):  ${first.seconds.toFixed(1)} s, sent ${one.files_sent} files, ${mb(one.bytes_sent)}; steps ${steps(one.timings_ms)}`,
    );

    // A publish queues work off its path (the keyword scan of the deployment's text files, 48 MB here): each
    // repeat deploy starts once that is done, as a developer's next deploy would, not racing it for the CPU.
    const settle = async () => {
      const settling = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await Promise.all(drivers.map((driver) => ('idle' in driver ? (driver as { idle(): Promise<void> }).idle() : undefined)));
      return (performance.now() - settling) / 1000;
    };
    console.log(`off-path work of the first publish settled in ${(await settle()).toFixed(1)} s`);
    // A repeat deploy is a fraction of a second, where this machine's run-to-run swing is a tenth of one:
    // it is timed REPEATS times (one file changed each time); the target is judged on the median, and the
    // first repeat is shown on its own as well.
    type Repeat = {
      seconds: number;
      files_sent: number;
      bytes_sent: number;
      files_hashed: number;
      deployment_id: string;
      timings_ms: Record<string, number>;
    };
    const repeats: Repeat[] = [];
    let keptBeforeLast = '';
    for (let i = 0; i < REPEATS; i++) {
      if (i > 0) await settle();
      // What the scans kept before the last repeat: that deploy's keyword scan is timed below from this state.
      if (i === REPEATS - 1) keptBeforeLast = await readScanCache(team.id, one.project_id);
      writeFileSync(changeable, randomBytes(2048));
      const second = await cli(['deploy', site, '--project', one.project_id, '--json']);
      if (second.code !== 0) throw new Error(`repeat deploy failed: ${second.stderr}`);
      const two = JSON.parse(second.stdout) as Omit<Repeat, 'seconds'>;
      repeats.push({ ...two, seconds: second.seconds });
      console.log(
        `deploy (repeat ${i + 1}): ${second.seconds.toFixed(2)} s, read ${two.files_hashed} file(s), sent ${two.files_sent} file(s), ${two.bytes_sent} bytes; steps ${steps(two.timings_ms, 'ms')}`,
      );
    }
    await settle();
    const last = repeats.at(-1)!.deployment_id;
    await timeKeywordScans({ teamId: team.id, projectId: one.project_id, deploymentId: last, kept: keptBeforeLast });
    const secondSeconds = repeats.map((r) => r.seconds).sort((a, b) => a - b)[Math.floor(REPEATS / 2)]!;
    const filesSent = Math.max(...repeats.map((r) => r.files_sent));
    const filesRead = Math.max(...repeats.map((r) => r.files_hashed));

    const ratioFirst = first.seconds / sync.seconds;
    const ratioSecond = secondSeconds / first.seconds;
    console.log(
      `first deploy / s3 sync = ${ratioFirst.toFixed(2)}x (target <= 1.0x: ${ratioFirst <= 1.0 ? 'met' : 'MISSED'})\n` +
        `second (median of ${REPEATS} repeats) = ${secondSeconds.toFixed(3)} s (target <= 0.5 s: ${secondSeconds <= 0.5 ? 'met' : 'MISSED'}); ` +
        // The first repeat also pays the local platform's first load of the project-upload route (a cold container).
        `first repeat alone = ${repeats[0]!.seconds.toFixed(3)} s (${repeats[0]!.seconds <= 0.5 ? 'met' : 'MISSED'}); ` +
        `second / first = ${ratioSecond.toFixed(3)} (target <= 0.03: ${ratioSecond <= 0.03 ? 'met' : 'MISSED'}); ` +
        `files sent by each repeat: at most ${filesSent} (target 1: ${filesSent === 1 ? 'met' : 'MISSED'}); ` +
        `files read by each repeat: at most ${filesRead} (target 1: ${filesRead === 1 ? 'met' : 'MISSED'})`,
    );
  } finally {
    await platform.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

// `npx tsx bench/deploy.ts` runs this benchmark alone.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runDeployBench();
}
