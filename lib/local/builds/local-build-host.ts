import { childPath } from '../../sandbox/capabilities.ts';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { config } from '../../config.ts';
import { scriptJob, type BuildHost, type BuildJob, type BuildReport } from '../../builds/host.ts';
import { checkRepository, detectPackageManager, fileHash, lockfileOf } from '../../builds/script/build.mjs';
import { startBuildEgress } from '../../builds/build-egress.ts';
import type { EgressProxy } from '../../sandbox/egress-proxy.ts';
import { NOBODY, probeSandbox, type SandboxCapabilities } from '../../sandbox/capabilities.ts';
import { EGRESS_PORT, INSIDE, spawnBuild, stageRuntime, type BuildProcess } from '../../sandbox/build-process.ts';
import { localConfig } from '../../local-config.ts';

/**
 * The local BuildHost: the commit is fetched by the platform (git, outside
 * the sandbox, so the credential never enters it), then the build script's
 * build phase runs in the sandbox (lib/sandbox/build-process.ts). The
 * project's package store is a folder per project and lockfile hash, bound
 * into the sandbox: an unchanged lockfile finds it warm.
 */
export const BUILD_SCRIPT = fileURLToPath(new URL('../../builds/script/build.mjs', import.meta.url));

interface Run {
  lines: string[];
  state: BuildReport['state'];
  failure?: BuildReport['failure'];
  commit?: BuildReport['commit'];
  workspace: string;
  process: BuildProcess | null;
  stopped: boolean;
  done: Promise<void>;
}

export type LocalBuildHost = BuildHost & { fallbacks: string[]; close(): Promise<void> };

function runFetch(run: Run, job: BuildJob, workspace: string): Promise<number> {
  const { git, heartbeat_ms } = scriptJob(job);
  const fetchJob = { source_dir: join(workspace, 'src'), git, heartbeat_ms };
  const file = join(workspace, 'fetch.json');
  writeFileSync(file, JSON.stringify(fetchJob), { mode: 0o600 });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUILD_SCRIPT, 'fetch', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: childPath() },
    });
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      let partial = '';
      stream.on('data', (text: string) => {
        partial += text;
        const lines = partial.split('\n');
        partial = lines.pop()!;
        run.lines.push(...lines);
      });
    }
    child.on('close', (code) => {
      rmSync(file, { force: true });
      resolve(code ?? 1);
    });
  });
}

function commitOf(src: string): BuildReport['commit'] {
  const out = spawnSync('git', ['-C', src, 'log', '-1', '--format=%H%n%B'], { encoding: 'utf8' });
  if (out.status !== 0) return undefined;
  const [sha, ...message] = out.stdout.split('\n');
  return { sha: sha!.trim(), message: message.join('\n').trim() || null };
}

/**
 * The checkout's root directory, checked before the platform reads its package.json and lockfile here,
 * outside the sandbox (build.mjs checkRepository: never through a link); null when the check failed the run.
 */
function checkedRoot(run: Run, job: BuildJob): string | null {
  try {
    return checkRepository(join(run.workspace, 'src'), job.rootDirectory);
  } catch (error) {
    const line = (error as Error).message;
    run.lines.push(line);
    run.failure = { kind: (error as { kind?: 'user' | 'platform' }).kind ?? 'platform', line };
    run.state = 'failed';
    return null;
  }
}

/**
 * The project's store for the lockfile of this checkout: warm when a build of the same lockfile made it.
 * Its folder is named by a hash of the project id: the sandbox's mountinfo shows the folder bound on /cache.
 */
function packageStore(cacheRoot: string, job: BuildJob, rootDir: string): { dir: string; line: string } {
  const manager = detectPackageManager(rootDir, job.packageManager).name;
  const lockfile = lockfileOf(rootDir, manager);
  const key = lockfile ? fileHash(join(rootDir, lockfile)).slice(0, 16) : 'no-lockfile';
  const projectDir = join(cacheRoot, createHash('sha256').update(`slipway-build-cache\0${job.projectId}`).digest('hex').slice(0, 32));
  const dir = join(projectDir, key);
  const warm = existsSync(dir);
  mkdirSync(dir, { recursive: true });
  // The sandboxed user (nobody) must traverse to its store.
  for (const folder of [cacheRoot, projectDir]) chmodSync(folder, 0o711);
  // One store per project: the one of the previous lockfile goes.
  for (const other of existsSync(projectDir) ? readdirSync(projectDir) : [])
    if (other !== key) rmSync(join(projectDir, other), { recursive: true, force: true });
  const line = lockfile
    ? `Package cache: ${warm ? 'warm' : 'cold'} (${lockfile} ${key.slice(0, 8)})`
    : `Package cache: ${warm ? 'warm' : 'cold'} (no lockfile)`;
  return { dir, line };
}

function sandboxJob(job: BuildJob, isolated: boolean, workspace: string, cacheDir: string) {
  const at = (inside: string, outside: string) => (isolated ? inside : outside);
  const ws = at(INSIDE.workspace, workspace);
  return {
    source_dir: `${ws}/src`,
    publish_dir: `${ws}/publish`,
    result_file: `${ws}/result.json`,
    home: `${ws}/home`,
    cache_dir: at(INSIDE.cache, cacheDir),
    path: isolated ? `${INSIDE.node}:/usr/local/bin:/usr/bin:/bin` : localConfig.searchPath(),
    egress: isolated ? { socket: `${INSIDE.sockets}/egress.sock`, port: EGRESS_PORT } : null,
    // The sandbox never gets the fetch credential: the commit is fetched already.
    ...scriptJob(job),
    git: null,
  };
}

/** The build's egress proxy (lib/builds/build-egress.ts), its lines masked as the script masks its own: a variable's value may name a host. */
function startMaskedEgress(socketPath: string, job: BuildJob, run: Run): Promise<EgressProxy> {
  const secrets = Object.values(job.env).filter((v) => v.length >= 3);
  return startBuildEgress(socketPath, (line) => run.lines.push(secrets.reduce((out, value) => out.split(value).join('***'), line)));
}

/** What every build of one host shares: the sandbox it can make, the node and script it binds, the package stores' root. */
interface HostSetup {
  caps: SandboxCapabilities;
  runtime: { nodePath: string; scriptPath: string };
  cacheRoot: string;
}

export function createLocalBuildHost(options: { capabilities?: SandboxCapabilities } = {}): LocalBuildHost {
  const caps = options.capabilities ?? probeSandbox();
  const root = mkdtempSync(join(tmpdir(), 'slipway-builds-'));
  chmodSync(root, 0o711);
  const setup: HostSetup = {
    caps,
    // Node and the build script as the sandbox binds them: never from the checkout (lib/sandbox/build-process.ts).
    runtime:
      caps.isolation === 'bwrap' ? stageRuntime(caps.nodePath, BUILD_SCRIPT, root) : { nodePath: caps.nodePath, scriptPath: BUILD_SCRIPT },
    cacheRoot: config.buildCacheDir() ?? join(tmpdir(), 'slipway-build-cache'),
  };
  const runs = new Map<string, Run>();
  const fallbacks =
    caps.isolation === 'bwrap'
      ? []
      : ['Builds: bubblewrap is unavailable, so builds run on the machine with no sandbox and no egress rule.'];
  return {
    fallbacks,
    async start(job) {
      const id = randomUUID();
      const workspace = join(root, id);
      mkdirSync(workspace, { mode: 0o755 });
      const run: Run = { lines: [], state: 'running', workspace, process: null, stopped: false, done: Promise.resolve() };
      run.done = executeRun(setup, run, job, id).catch((error: unknown) => {
        run.state = 'failed';
        run.failure = { kind: 'platform', line: `The local build host failed: ${(error as Error).message}` };
      });
      runs.set(id, run);
      return id;
    },
    async report(handle, fromLine) {
      const run = runs.get(handle);
      if (!run) return { state: 'lost', lines: [] };
      const outputDir = run.state === 'succeeded' ? join(run.workspace, 'publish') : undefined;
      return { state: run.state, lines: run.lines.slice(fromLine), failure: run.failure, outputDir, commit: run.commit };
    },
    async stop(handle) {
      const run = runs.get(handle);
      if (!run) return;
      run.stopped = true;
      run.process?.kill();
      await run.done;
    },
    async release(handle) {
      const run = runs.get(handle);
      runs.delete(handle);
      if (run) rmSync(run.workspace, { recursive: true, force: true });
    },
    async close() {
      for (const handle of [...runs.keys()]) await this.stop(handle);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** One build: fetch the commit, check its root, find its package store, then run the build phase in the sandbox. */
async function executeRun(setup: HostSetup, run: Run, job: BuildJob, id: string): Promise<void> {
  if ((await runFetch(run, job, run.workspace)) !== 0) {
    run.failure = { kind: 'platform', line: run.lines.findLast((l) => l.startsWith('Fetch failed')) ?? 'Fetch failed.' };
    run.state = 'failed';
    return;
  }
  run.commit = commitOf(join(run.workspace, 'src'));
  const rootDir = checkedRoot(run, job);
  if (rootDir === null) return;
  const store = packageStore(setup.cacheRoot, job, rootDir);
  run.lines.push(store.line);
  await runSandboxed(setup, run, job, id, store.dir);
}

/** The build phase in the sandbox, behind the build's egress proxy, with its job file, home and sockets folder. */
async function runSandboxed(setup: HostSetup, run: Run, job: BuildJob, id: string, cacheDir: string): Promise<void> {
  const { caps, runtime } = setup;
  const isolated = caps.isolation === 'bwrap';
  const sockets = join(run.workspace, '..', `${id}-sock`);
  mkdirSync(sockets, { recursive: true });
  mkdirSync(join(run.workspace, 'home'), { recursive: true });
  writeFileSync(join(run.workspace, 'job.json'), JSON.stringify(sandboxJob(job, isolated, run.workspace, cacheDir)), { mode: 0o600 });
  if (caps.dropToNobody) spawnSync('chown', ['-R', `${NOBODY}:${NOBODY}`, run.workspace, cacheDir, sockets]);
  let proxy: EgressProxy | null = null;
  try {
    if (isolated) proxy = await startMaskedEgress(join(sockets, 'egress.sock'), job, run);
    if (run.stopped) return;
    run.process = spawnBuild({
      caps,
      runtime,
      id,
      scriptPath: BUILD_SCRIPT,
      workspace: run.workspace,
      cacheDir,
      socketsDir: sockets,
      memoryMb: job.memoryMb,
      onLine: (l) => run.lines.push(l),
    });
    const exit = await run.process.exited;
    settleRun(run, exit, job.memoryMb);
  } finally {
    await proxy?.close();
    rmSync(sockets, { recursive: true, force: true });
  }
}

function settleRun(run: Run, exit: { code: number | null; outOfMemory: boolean }, memoryMb: number): void {
  if (run.stopped) {
    run.state = 'failed';
    run.failure = { kind: 'platform', line: 'The build was stopped.' };
    return;
  }
  if (exit.outOfMemory) {
    run.state = 'failed';
    run.failure = { kind: 'user', line: `Build failed: it ran out of memory (builds have ${memoryMb} MB).` };
    return;
  }
  let result: { outcome?: string; failure_line?: string; failure_kind?: 'user' | 'platform' } = {};
  try {
    result = JSON.parse(readFileSync(join(run.workspace, 'result.json'), 'utf8'));
  } catch {
    run.state = 'failed';
    run.failure = {
      kind: 'platform',
      line: `The build script ended without a result (exit code ${exit.code}). This is a platform issue; please retry.`,
    };
    return;
  }
  run.state = result.outcome === 'succeeded' ? 'succeeded' : 'failed';
  if (run.state === 'failed') run.failure = { kind: result.failure_kind ?? 'platform', line: result.failure_line ?? 'The build failed.' };
}
