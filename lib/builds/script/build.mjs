#!/usr/bin/env node
// The one build script (docs/builds.md): the local sandbox and the CodeBuild image run this file.
// It has no dependencies beyond Node's built-ins, git and tar. `node build.mjs fetch JOB` fetches the
// commit; `node build.mjs build JOB` installs, builds and collects what to publish; `node build.mjs all`
// does both, reading the job from the presigned URL in SLIPWAY_JOB_URL (the cloud).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  cpSync,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, connect } from 'node:net';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Lines of a failed step's output searched for the line that says why. */
const TAIL_LINES = 400;
const LOCKFILES = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
];

let secrets = [];
const logLines = [];
/** A step with no output this long prints that it is still running (BUILD_HEARTBEAT_MS; 30 s). */
let heartbeatMs = 30_000;

/** Every value of the build's environment variables is masked in each line it prints. */
function mask(line) {
  let out = line;
  for (const value of secrets) out = out.split(value).join('***');
  return out;
}

function log(line) {
  const masked = mask(line);
  logLines.push(masked);
  process.stdout.write(`${masked}\n`);
}

class StepFailure extends Error {
  constructor(phase, message, kind = 'user') {
    super(message);
    this.phase = phase;
    this.kind = kind;
  }
}

/** The line of a step's output that says why it failed: the first error-like one, else the last. */
function errorLine(tail) {
  const lines = tail.map((l) => l.trim()).filter(Boolean);
  const hit = lines.find((l) => /\b(error|err!|failed|cannot|not found|unable)\b/i.test(l));
  return (hit ?? lines[lines.length - 1] ?? '').slice(0, 300);
}

/** `75 s` as people say it: `1 min 15 s`. */
export function spokenDuration(ms) {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const rest = seconds % 60;
  return `${Math.floor(seconds / 60)} min${rest ? ` ${rest} s` : ''}`;
}

/**
 * Runs a command, printing its masked output line by line; resolves to its exit code and last lines.
 * A command silent for `heartbeatMs` gets a line saying it still runs: a build waiting on the network
 * must not look like a hung log.
 */
function run(command, args, options) {
  return new Promise((resolvePromise) => {
    const tail = [];
    const started = Date.now();
    const label = options.label ?? [command, ...args].join(' ');
    let quietSince = started;
    const beat = () => {
      const now = Date.now();
      log(
        `Still running: \`${label}\` has printed nothing for ${spokenDuration(now - quietSince)} (${spokenDuration(now - started)} in all).`,
      );
      heartbeat = setTimeout(beat, heartbeatMs);
    };
    let heartbeat = setTimeout(beat, heartbeatMs);
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: options.shell ?? false,
    });
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (text) => {
        quietSince = Date.now();
        clearTimeout(heartbeat);
        heartbeat = setTimeout(beat, heartbeatMs);
        partial += text;
        const lines = partial.split(/\r?\n/);
        partial = lines.pop();
        for (const line of lines) {
          log(line);
          tail.push(mask(line));
          if (tail.length > TAIL_LINES) tail.shift();
        }
      });
      stream.on('end', () => partial && (log(partial), tail.push(mask(partial))));
    }
    child.on('error', (error) => {
      clearTimeout(heartbeat);
      resolvePromise({ code: error.code === 'ENOENT' ? 127 : 1, tail: [...tail, `${command}: ${error.message}`] });
    });
    child.on('close', (code, signal) => {
      clearTimeout(heartbeat);
      resolvePromise({ code: code ?? (signal ? 128 : 1), tail });
    });
  });
}

function readJsonFile(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/*
 * Files of the checkout the platform reads itself (the package cache's key, the package manager), outside
 * the sandbox locally: never through a symbolic link. `checkRepository` refuses a root directory that is or
 * passes through a link, and a package.json or lockfile that is a link or not a regular file, before anything
 * reads them; the readers below look with lstat and open with O_NOFOLLOW whatever the check saw.
 */
const MANIFEST_FILES = ['package.json', ...LOCKFILES.map(([file]) => file)];

/** Whether `name` in `dir` is a regular file, looked at without following a link (a link is no file). */
function isRepoFile(dir, name) {
  return lstatSync(join(dir, name), { throwIfNoEntry: false })?.isFile() === true;
}

/** A regular file of the checkout, opened without following a link in its last component. */
function readRepoFile(path) {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

function readRepoJson(dir, name) {
  if (!isRepoFile(dir, name)) return null;
  try {
    return JSON.parse(readRepoFile(join(dir, name)).toString('utf8'));
  } catch {
    return null;
  }
}

/**
 * The root directory of the build, checked before the platform reads anything in it: inside the checkout,
 * every folder on the way a real folder (no link), and package.json and the lockfiles regular files (a link,
 * to a host file or anywhere, fails the build with a line saying so). Returns the root directory's path.
 */
export function checkRepository(sourceDir, rootDirectory) {
  const source = resolve(sourceDir);
  const rootDir = resolve(source, rootDirectory || '.');
  const missing = () => new StepFailure('install', `The root directory \`${rootDirectory}\` does not exist in the repository.`);
  if (!within(source, rootDir)) throw missing();
  let at = source;
  for (const part of relative(source, rootDir).split(sep).filter(Boolean)) {
    at = join(at, part);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink())
      throw new StepFailure(
        'install',
        `The root directory \`${rootDirectory}\` is a symbolic link in the repository (${relative(source, at)}); the platform never follows a link of the repository: use the folder itself.`,
      );
    if (!stat?.isDirectory()) throw missing();
  }
  for (const name of MANIFEST_FILES) {
    const stat = lstatSync(join(rootDir, name), { throwIfNoEntry: false });
    if (!stat || stat.isFile()) continue;
    const what = stat.isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
    throw new StepFailure(
      'install',
      `Install failed: ${name} is ${what}; the platform reads package.json and lockfiles only as regular files committed to the repository, never through a link.`,
    );
  }
  return rootDir;
}

/** The package manager: the project's setting, else package.json's packageManager, else the lockfile, else npm. */
export function detectPackageManager(rootDir, setting) {
  if (setting) return { name: setting, why: 'the project setting' };
  const declared = readRepoJson(rootDir, 'package.json')?.packageManager;
  const name = typeof declared === 'string' ? declared.split('@')[0] : '';
  if (['npm', 'pnpm', 'yarn', 'bun'].includes(name)) return { name, why: 'packageManager in package.json' };
  for (const [file, manager] of LOCKFILES) if (isRepoFile(rootDir, file)) return { name: manager, why: file };
  return { name: 'npm', why: 'no lockfile' };
}

/** The lockfile the install honours, if there is one. */
export function lockfileOf(rootDir, manager) {
  const names = LOCKFILES.filter(([, m]) => m === manager).map(([f]) => f);
  return names.find((f) => isRepoFile(rootDir, f)) ?? null;
}

/** The install command: frozen to the lockfile when there is one. */
function installCommand(manager, lockfile, rootDir) {
  const frozen = lockfile !== null;
  if (manager === 'npm') return ['npm', frozen ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']];
  if (manager === 'pnpm') return ['pnpm', ['install', ...(frozen ? ['--frozen-lockfile'] : [])]];
  if (manager === 'bun') return ['bun', ['install', ...(frozen ? ['--frozen-lockfile'] : [])]];
  const berry = existsSync(join(rootDir, '.yarnrc.yml'));
  return ['yarn', ['install', ...(frozen ? [berry ? '--immutable' : '--frozen-lockfile'] : [])]];
}

/** Where each package manager keeps its store, under the build's cache folder. */
function cacheEnv(manager, cacheDir) {
  if (!cacheDir) return {};
  return {
    npm: { npm_config_cache: join(cacheDir, 'npm'), npm_config_prefer_offline: 'true' },
    pnpm: { npm_config_store_dir: join(cacheDir, 'pnpm') },
    yarn: { YARN_CACHE_FOLDER: join(cacheDir, 'yarn') },
    bun: { BUN_INSTALL_CACHE_DIR: join(cacheDir, 'bun') },
  }[manager];
}

/**
 * The install's network bounds: a registry that cannot be reached fails the install within a minute, not
 * at the build's time budget (npm waits 5 minutes for an idle socket and retries twice, backing off up to a
 * minute). 20 s idle, one retry 2 to 5 s later; the egress proxy gives up on a connect after 15 s. npm and
 * pnpm read the npm_config_ names, Yarn 1 network-timeout, Yarn 2+ httpTimeout/httpRetry. The project's
 * variables of the same names win (they are set after these).
 */
const INSTALL_NETWORK_ENV = {
  npm_config_fetch_timeout: '20000',
  npm_config_fetch_retries: '1',
  npm_config_fetch_retry_mintimeout: '2000',
  npm_config_fetch_retry_maxtimeout: '5000',
};
const YARN_NETWORK_ENV = { classic: { YARN_NETWORK_TIMEOUT: '20000' }, berry: { YARN_HTTP_TIMEOUT: '20000', YARN_HTTP_RETRY: '1' } };

/** Lines of a failed install that say the network failed (npm, pnpm, Yarn and Bun wordings). */
const NETWORK_FAILURE =
  /\b(ETIMEDOUT|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|ERR_SOCKET_TIMEOUT|E50[234]|network timeout|socket timeout|ConnectionRefused)\b/;

/** Connections of this build the egress proxy refused or could not make, as the bridge saw its answers. */
const egressTrouble = [];

const OUT_OF_STEP =
  /in sync|frozen[- ]lockfile|lockfile.*(?:outdated|not up to date|needs to be updated|would have been modified)|--immutable/i;

async function install(job, rootDir, env) {
  if (!existsSync(join(rootDir, 'package.json'))) {
    log('No package.json: nothing to install.');
    return null;
  }
  const manager = detectPackageManager(rootDir, job.package_manager);
  const lockfile = lockfileOf(rootDir, manager.name);
  const [command, args] = installCommand(manager.name, lockfile, rootDir);
  log(`Installing with ${manager.name} (${manager.why}): ${command} ${args.join(' ')}`);
  const started = Date.now();
  const troubleBefore = egressTrouble.length;
  const yarn = manager.name === 'yarn' ? YARN_NETWORK_ENV[existsSync(join(rootDir, '.yarnrc.yml')) ? 'berry' : 'classic'] : {};
  const result = await run(command, args, {
    cwd: rootDir,
    env: { ...INSTALL_NETWORK_ENV, ...yarn, ...env, ...cacheEnv(manager.name, job.cache_dir) },
  });
  if (result.code === 0) {
    log(`Install took ${Date.now() - started} ms.`);
    return manager.name;
  }
  throw new StepFailure('install', installFailureLine({ command, args, lockfile, ...result, trouble: egressTrouble.slice(troubleBefore) }));
}

/**
 * The classified line of a failed install: the package manager missing, the lockfile out of step, the registry
 * unreachable (a connection the egress refused or could not make, else a network error in the output), else
 * the exit code and the output's error line.
 */
export function installFailureLine({ command, args, lockfile, code, tail, trouble }) {
  if (code === 127) return `Install failed: ${command} is not available in the build image.`;
  if (lockfile && tail.some((l) => OUT_OF_STEP.test(l)))
    return `Install failed: ${lockfile} is out of step with package.json; update the lockfile and push again.`;
  const unreachable = 'Install failed: the package registry could not be reached:';
  if (trouble[0]?.why) return `${unreachable} the build's egress rule refused ${trouble[0].target}: ${trouble[0].why}`;
  if (trouble[0]) return `${unreachable} the connection to ${trouble[0].target} failed.`;
  const network = tail.filter((l) => NETWORK_FAILURE.test(l));
  if (network.length > 0) return `${unreachable} ${errorLine(network)}`;
  return `Install failed: ${command} ${args[0]} exited with code ${code}: ${errorLine(tail)}`;
}

async function buildStep(job, rootDir, env, manager) {
  if (!job.build_command) {
    log('No build command: the output folder is published as it is.');
    return;
  }
  const command = job.build_command.replaceAll('{pm}', manager ?? 'npm');
  log(`Running the build command: ${command}`);
  const started = Date.now();
  const result = await run(command, [], { cwd: rootDir, env, shell: '/bin/sh' });
  log(`The build command took ${Date.now() - started} ms.`);
  if (result.code !== 0)
    throw new StepFailure('build', `Build failed: \`${command}\` exited with code ${result.code}: ${errorLine(result.tail)}`);
}

/** Whether `inner` is `outer` or inside it (both real paths). */
const within = (outer, inner) => inner === outer || inner.startsWith(`${outer}${sep}`);

/** The node_modules package folders a set of packages needs, dependencies of dependencies included. */
function dependencyClosure(rootDir, names) {
  const found = new Set();
  const queue = names.map((name) => ({ name, from: rootDir }));
  while (queue.length > 0) {
    const { name, from } = queue.shift();
    let dir = null;
    for (let at = from; within(rootDir, at); at = dirname(at)) {
      const candidate = join(at, 'node_modules', name);
      if (existsSync(join(candidate, 'package.json'))) {
        dir = candidate;
        break;
      }
      if (at === rootDir) break;
    }
    if (!dir || found.has(dir)) continue;
    found.add(dir);
    const pkg = readJsonFile(join(dir, 'package.json')) ?? {};
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) queue.push({ name: dep, from: dir });
  }
  return [...found];
}

/** Copies a folder without the entries `skip` names at its top. */
function copyFolder(from, to, skip = []) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from)) {
    if (skip.includes(entry)) continue;
    cpSync(join(from, entry), join(to, entry), { recursive: true, dereference: false, verbatimSymlinks: true });
  }
}

/** The folder to publish: the output's files at its root, and (production) the functions with what they import. */
function collect(job, sourceDir, rootDir, publishDir) {
  const outDir = resolve(rootDir, job.output_dir || '.');
  if (!existsSync(outDir) || !statSync(outDir).isDirectory()) {
    throw new StepFailure('output', `No output folder: \`${job.output_dir}\` does not exist after the build.`);
  }
  if (!within(realpathSync(sourceDir), realpathSync(outDir)))
    throw new StepFailure('output', `The output folder \`${job.output_dir}\` is outside the repository.`);
  const isRoot = realpathSync(outDir) === realpathSync(rootDir);
  rmSync(publishDir, { recursive: true, force: true });
  copyFolder(outDir, publishDir, ['.git', ...(isRoot ? ['node_modules', 'functions'] : [])]);
  const functionsDir = join(rootDir, 'functions');
  if (job.include_functions && existsSync(functionsDir)) {
    const root = job.root_prefix ?? '';
    copyFolder(functionsDir, join(publishDir, root, 'functions'));
    const pkg = readJsonFile(join(rootDir, 'package.json')) ?? {};
    for (const dir of dependencyClosure(rootDir, Object.keys(pkg.dependencies ?? {}))) {
      cpSync(dir, join(publishDir, root, relative(rootDir, dir)), {
        recursive: true,
        filter: (src) => !src.slice(dir.length).includes(`${sep}node_modules${sep}`),
      });
    }
  }
  const count = countFiles(publishDir);
  if (count === 0) throw new StepFailure('output', `The output folder \`${job.output_dir}\` is empty.`);
  log(
    `Collected ${count} files from ${job.output_dir || '.'}${job.include_functions && existsSync(functionsDir) ? ' and functions/' : ''}.`,
  );
  return count;
}

function countFiles(dir) {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) count += entry.isDirectory() ? countFiles(join(dir, entry.name)) : 1;
  return count;
}

/**
 * A bridge from 127.0.0.1:port to the egress proxy's socket: the sandbox's only way out locally, the way out the
 * script gives its steps in the cloud (port 0: any free one). Resolves once it listens.
 */
async function startEgressBridge(egress) {
  if (!egress) return null;
  const server = createServer((client) => {
    const upstream = connect(egress.socket);
    let target = '';
    client.once('data', (chunk) => {
      target = /^[A-Z]+ (\S+)/.exec(chunk.toString('latin1'))?.[1] ?? '';
    });
    // The proxy answers a refusal with 403, its reason header and a sentence; a target it could not reach with 502.
    upstream.once('data', (chunk) => {
      const answer = chunk.toString('utf8');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1];
      if (status === '403' && /\r\nx-slipway-egress-refused:/i.test(answer))
        egressTrouble.push({ target, why: answer.split('\r\n\r\n')[1]?.trim() || 'refused' });
      else if (status === '502') egressTrouble.push({ target, why: null });
    });
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(egress.port, '127.0.0.1', resolvePromise);
  });
  return server;
}

/** The environment install and build run with: nothing of this process but PATH, and the project's variables. */
function buildEnv(job, proxyPort) {
  const proxy = proxyPort ? `http://127.0.0.1:${proxyPort}` : null;
  return {
    PATH: job.path ?? process.env.PATH,
    HOME: job.home ?? process.env.HOME ?? '/tmp',
    CI: 'true',
    LANG: 'C.UTF-8',
    // No background calls home: a build's network use is its install and its build command.
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...(proxy
      ? {
          HTTPS_PROXY: proxy,
          https_proxy: proxy,
          HTTP_PROXY: proxy,
          http_proxy: proxy,
          npm_config_proxy: proxy,
          npm_config_https_proxy: proxy,
        }
      : {}),
    ...job.env,
  };
}

export async function buildPhase(job) {
  heartbeatMs = job.heartbeat_ms ?? heartbeatMs;
  secrets = Object.values(job.env ?? {}).filter((v) => typeof v === 'string' && v.length >= 3);
  const sourceDir = resolve(job.source_dir);
  const rootDir = resolve(sourceDir, job.root_directory || '.');
  const result = { outcome: 'succeeded', phase: 'done', failure_line: null, failure_kind: null, package_manager: null, file_count: 0 };
  let bridge = null;
  try {
    bridge = await startEgressBridge(job.egress);
    checkRepository(sourceDir, job.root_directory);
    const env = buildEnv(job, bridge?.address().port);
    result.package_manager = await install(job, rootDir, env);
    await buildStep(job, rootDir, env, result.package_manager);
    result.file_count = collect(job, sourceDir, rootDir, resolve(job.publish_dir));
    log('Build succeeded.');
  } catch (error) {
    Object.assign(result, failureOf(error));
    log(result.failure_line);
  } finally {
    bridge?.close();
  }
  return result;
}

function failureOf(error) {
  if (error instanceof StepFailure) return { outcome: 'failed', phase: error.phase, failure_line: error.message, failure_kind: error.kind };
  return { outcome: 'failed', phase: 'platform', failure_line: `The build script failed: ${error.message}`, failure_kind: 'platform' };
}

/** Fetches exactly one commit, shallow; credentials travel in git's environment, never on a command line. */
export async function fetchPhase(job) {
  heartbeatMs = job.heartbeat_ms ?? heartbeatMs;
  const dir = resolve(job.source_dir);
  mkdirSync(dir, { recursive: true });
  const auth = job.git.authorization
    ? { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: ${job.git.authorization}` }
    : {};
  const env = { PATH: process.env.PATH, HOME: dirname(dir), GIT_TERMINAL_PROMPT: '0', ...auth };
  const git = (args) =>
    run(
      'git',
      [
        '-c',
        'http.followRedirects=false',
        '-c',
        'protocol.allow=never',
        '-c',
        'protocol.https.allow=always',
        '-c',
        'protocol.http.allow=always',
        ...args,
      ],
      { cwd: dir, env, label: `git ${args[0]}` },
    );
  // A commit by its SHA is shown short; a ref (a manual build of a branch head) whole.
  const what = /^[0-9a-f]{40}$/i.test(job.git.commit) ? job.git.commit.slice(0, 12) : job.git.commit;
  log(`Fetching ${what} from ${job.git.display_url}`);
  for (const args of [
    ['init', '-q'],
    ['fetch', '-q', '--depth', '1', '--no-tags', job.git.url, job.git.commit],
    ['checkout', '-q', '--detach', 'FETCH_HEAD'],
  ]) {
    const result = await git(args);
    if (result.code !== 0)
      throw new StepFailure('fetch', `Fetch failed: git ${args[0]} exited with code ${result.code}: ${errorLine(result.tail)}`, 'platform');
  }
}

/** Sha-256 of a file of the checkout, hex: the key of a package store (read without following a link). */
export function fileHash(path) {
  return createHash('sha256').update(readRepoFile(path)).digest('hex');
}

async function main() {
  const [mode, jobFile] = process.argv.slice(2);
  if (mode === 'all') {
    const { runInCloud } = await import('./cloud.mjs');
    return runInCloud({ fetchPhase, buildPhase, log, logLines, fileHash, detectPackageManager, lockfileOf, checkRepository });
  }
  const job = JSON.parse(readFileSync(jobFile, 'utf8'));
  if (mode === 'fetch') {
    try {
      await fetchPhase(job);
    } catch (error) {
      log(error.message);
      process.exitCode = 2;
    }
    return;
  }
  const result = await buildPhase(job);
  writeFileSync(job.result_file, JSON.stringify(result));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  main().catch((error) => {
    process.stderr.write(`build script: ${error.message}\n`);
    process.exitCode = 1;
  });
}
