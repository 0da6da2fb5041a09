// The build script's cloud side (docs/builds.md, "In the cloud"): the CodeBuild container runs
// `node build.mjs all` with SLIPWAY_JOB_URL, a presigned GET of the job. Everything else travels
// through the presigned URLs the job names: the log (rewritten every LOG_FLUSH_MS), the result, the
// output archive and the project's package store. The container holds no permission of its own.
// Install and build go out through the build's egress proxy, as locally (egress.mjs, bundled into the
// image from lib/builds/build-egress.ts): each refused or failed connection is a log line, and a
// blackholed registry is given up after 15 s per attempt, not after the OS's connect timeout.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openAsBlob, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBuildEgress } from './egress.mjs';

const LOG_FLUSH_MS = 2000;

async function put(url, body, contentType = 'application/octet-stream') {
  const res = await fetch(url, { method: 'PUT', body, headers: { 'content-type': contentType } });
  if (!res.ok) throw new Error(`PUT answered ${res.status}`);
}

function tar(args) {
  const out = spawnSync('tar', args, { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`tar ${args[0]} failed: ${(out.stderr || '').trim().split('\n')[0]}`);
}

/** The project's package store: the archive of the last cold build, used when its lockfile hash is this one's. */
async function restoreStore(urls, cacheDir, lockHash, log) {
  mkdirSync(cacheDir, { recursive: true });
  if (!urls.cache_get || !lockHash) return false;
  const res = await fetch(urls.cache_get).catch(() => null);
  if (!res?.ok) return false;
  const file = join(cacheDir, '..', 'store.tar');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  tar(['-xf', file, '-C', cacheDir]);
  rmSync(file, { force: true });
  const stored = existsSync(join(cacheDir, '.lockhash')) ? readFileSync(join(cacheDir, '.lockhash'), 'utf8').trim() : '';
  if (stored === lockHash) return true;
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  log?.('The package store was made for another lockfile: installing cold.');
  return false;
}

async function saveStore(urls, cacheDir, lockHash) {
  if (!urls.cache_put || !lockHash) return;
  writeFileSync(join(cacheDir, '.lockhash'), lockHash);
  const file = join(cacheDir, '..', 'store-out.tar');
  tar(['-cf', file, '-C', cacheDir, '.']);
  await put(urls.cache_put, await openAsBlob(file)).catch(() => undefined);
}

export async function runInCloud(script) {
  const envelope = await (await fetch(process.env.SLIPWAY_JOB_URL)).json();
  // The job holds the fetch credential: read once, then gone, whatever the build does later.
  await fetch(envelope.urls.job_delete, { method: 'DELETE' }).catch(() => undefined);
  delete process.env.SLIPWAY_JOB_URL;
  const { job, urls } = envelope;
  const work = mkdtempSync(join(tmpdir(), 'slipway-build-'));
  const dirs = {
    source_dir: join(work, 'src'),
    publish_dir: join(work, 'publish'),
    cache_dir: join(work, 'cache', 'store'),
    home: join(work, 'home'),
  };
  mkdirSync(dirs.home, { recursive: true });
  let flushed = 0;
  const flush = async () => {
    if (script.logLines.length === flushed) return;
    flushed = script.logLines.length;
    await put(urls.log_put, script.logLines.join('\n'), 'text/plain; charset=utf-8').catch(() => undefined);
  };
  const timer = setInterval(() => void flush(), LOG_FLUSH_MS);
  let result;
  try {
    result = await fetchAndBuild(script, job, urls, dirs);
  } catch (error) {
    result = { outcome: 'failed', phase: 'platform', failure_line: `The build script failed: ${error.message}`, failure_kind: 'platform' };
  }
  clearInterval(timer);
  await flush();
  await put(urls.result_put, JSON.stringify(result), 'application/json');
}

async function fetchAndBuild(script, job, urls, dirs) {
  try {
    await script.fetchPhase({ source_dir: dirs.source_dir, git: job.git });
  } catch (error) {
    return { outcome: 'failed', phase: 'fetch', failure_line: error.message, failure_kind: error.kind ?? 'platform' };
  }
  const shown = spawnSync('git', ['-C', dirs.source_dir, 'log', '-1', '--format=%H%n%B'], { encoding: 'utf8' });
  const [sha, ...message] = (shown.stdout ?? '').split('\n');
  const commit = sha ? { sha: sha.trim(), message: message.join('\n').trim() || null } : null;
  let rootDir;
  try {
    // Read here, before the build: never through a link of the repository.
    rootDir = script.checkRepository(dirs.source_dir, job.root_directory);
  } catch (error) {
    script.log(error.message);
    return {
      outcome: 'failed',
      phase: error.phase ?? 'install',
      failure_line: error.message,
      failure_kind: error.kind ?? 'platform',
      commit,
    };
  }
  const manager = script.detectPackageManager(rootDir, job.package_manager).name;
  const lockfile = script.lockfileOf(rootDir, manager);
  const lockHash = lockfile ? script.fileHash(join(rootDir, lockfile)).slice(0, 16) : null;
  const warm = await restoreStore(urls, dirs.cache_dir, lockHash, script.log);
  script.log(`Package cache: ${warm ? 'warm' : 'cold'} (${lockfile ? `${lockfile} ${lockHash.slice(0, 8)}` : 'no lockfile'})`);
  const socket = join(dirs.home, '..', 'egress.sock');
  const egress = await startBuildEgress(socket, script.log);
  let result;
  try {
    result = await script.buildPhase({ ...job, ...dirs, egress: { socket, port: 0 } });
  } finally {
    await egress.close();
  }
  result.commit = commit;
  if (result.outcome !== 'succeeded') return result;
  if (!warm && result.package_manager) await saveStore(urls, dirs.cache_dir, lockHash);
  const archive = join(dirs.publish_dir, '..', 'output.tar');
  tar(['-cf', archive, '-C', dirs.publish_dir, '.']);
  await put(urls.output_put, await openAsBlob(archive));
  return result;
}
