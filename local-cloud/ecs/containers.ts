import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { inCgroups, makeCgroups, removeCgroup, watchMemory, type ProcessCgroups } from '../../lib/sandbox/cgroups.ts';
import { DEFAULT_PIDS_LIMIT, nodeBinary, type SandboxCapabilities } from '../../lib/sandbox/capabilities.ts';

/**
 * One container of a task definition, run from its Docker image asset as a local process (no Docker engine
 * here). The image is read from the asset's Dockerfile, which must be a `node` image that only copies files
 * and sets its entry: its files are copied per container, and the entry runs inside bubblewrap with them
 * at their image paths, this machine's Node of the image's major version at /usr/local/bin, the task's
 * volumes (a fresh folder each), the container's user, exactly the container's environment, and its memory
 * as a v1 memory cgroup. It shares the machine's network: the IAM proxy and the AWS endpoint are on loopback.
 */

/** A container definition as the template has it (AWS::ECS::TaskDefinition ContainerDefinitions[]). */
export interface ContainerDefinition {
  Name: string;
  EntryPoint?: string[];
  Command?: string[];
  WorkingDirectory?: string;
  User?: string;
  ReadonlyRootFilesystem?: boolean;
  MountPoints?: { ContainerPath: string; SourceVolume: string; ReadOnly?: boolean }[];
  PortMappings?: { ContainerPort: number; HostPort?: number; Protocol?: string }[];
  StopTimeout?: number;
}

/** What the Dockerfile gives a container: its base's Node, files, entry, working folder, user and variables. */
export interface ImageConfig {
  nodeMajor: number;
  copies: { sources: string[]; destination: string; raw: string }[];
  entryPoint: string[];
  command: string[];
  workingDirectory: string;
  user: string;
  environment: Record<string, string>;
}

export interface ContainerExit {
  /** As Docker reports it: the entry's code, or 128 + the signal that ended it. */
  exitCode: number;
  /** The memory cgroup (or the RSS watchdog) killed a process of the container. */
  outOfMemory: boolean;
}

export interface RunningContainer {
  exited: Promise<ContainerExit>;
  /** SIGTERM to the container's PID 1, SIGKILL after `graceMs` if it is still there (docker stop). */
  stop(graceMs: number): void;
}

/** A container this module cannot run as its image says: the message says why (ECS: CannotStartContainerError). */
export class ContainerStartError extends Error {}

/** The node image's default search path, and its `node` user. */
const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const USERS: Record<string, string> = { root: '0:0', node: '1000:1000' };
const SYSTEM_FOLDERS = ['usr', 'lib', 'lib64', 'etc', 'proc', 'dev', 'bin', 'sbin'];

/** Folders readable and listable, files readable, by any user (the container's user is not the platform's). */
function chmodTree(path: string): void {
  chmodSync(path, 0o755);
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isDirectory()) chmodTree(join(path, entry.name));
    else chmodSync(join(path, entry.name), 0o644);
  }
}

function jsonArray(instruction: string, text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown;
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  } catch {
    // Shell form: refused below.
  }
  throw new ContainerStartError(`${instruction} ${text}: only the exec form (a JSON array) runs here, without a shell`);
}

/** The Dockerfile's instructions, continuation lines joined and comments dropped. */
function instructions(text: string): [string, string][] {
  return text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const space = line.search(/\s/);
      return [line.slice(0, space).toUpperCase(), line.slice(space + 1).trim()] as [string, string];
    });
}

/** Reads the image a Dockerfile builds; anything a local process cannot be (RUN, ADD, another base) is refused. */
export function readDockerfile(imageDir: string, file = 'Dockerfile'): ImageConfig {
  const image: ImageConfig = {
    nodeMajor: 0,
    copies: [],
    entryPoint: [],
    command: [],
    workingDirectory: '/',
    user: 'root',
    environment: {},
  };
  for (const [instruction, rest] of instructions(readFileSync(join(imageDir, file), 'utf8'))) {
    switch (instruction) {
      case 'FROM': {
        const major = /^node:(\d+)[\w.-]*$/.exec(rest);
        if (!major) throw new ContainerStartError(`FROM ${rest}: only a node image's files can be run locally`);
        image.nodeMajor = Number(major[1]);
        break;
      }
      case 'WORKDIR':
        image.workingDirectory = posix.resolve(image.workingDirectory, rest);
        break;
      case 'COPY': {
        const parts = rest.split(/\s+/).filter((part) => !part.startsWith('--chown') && !part.startsWith('--chmod'));
        if (parts.some((part) => part.startsWith('--')))
          throw new ContainerStartError(`COPY ${rest}: only plain copies of the asset's files`);
        const raw = parts.pop()!;
        image.copies.push({ sources: parts, destination: posix.resolve(image.workingDirectory, raw), raw });
        break;
      }
      case 'USER':
        image.user = rest;
        break;
      case 'ENV':
        for (const [, name, value] of rest.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g))
          image.environment[name!] = value!.replace(/^"|"$/g, '');
        break;
      case 'ENTRYPOINT':
        image.entryPoint = jsonArray(instruction, rest);
        image.command = [];
        break;
      case 'CMD':
        image.command = jsonArray(instruction, rest);
        break;
      case 'LABEL':
      case 'EXPOSE':
        break;
      default:
        throw new ContainerStartError(
          `${instruction}: the local platform builds no image, so a Dockerfile may only copy files and set the entry`,
        );
    }
  }
  if (!image.nodeMajor) throw new ContainerStartError('the Dockerfile names no node base image');
  return image;
}

/** The container's user as uid and gid (the node image knows `root` and `node`). */
function userIds(user: string): { uid: number; gid: number } {
  const [uid, gid] = (USERS[user] ?? user).split(':');
  if (!/^\d+$/.test(uid ?? '') || (gid !== undefined && !/^\d+$/.test(gid)))
    throw new ContainerStartError(`user ${user} is not in the node image`);
  return { uid: Number(uid), gid: Number(gid ?? uid) };
}

/** This machine's Node when its major version is the image's; anything else is refused, not run on another Node. */
function nodeOfMajor(major: number): string {
  const node = nodeBinary();
  const version = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  if (Number(version.split('.')[0]) !== major)
    throw new ContainerStartError(`the image runs Node ${major}; this machine has ${version || 'none'}`);
  return node;
}

/** The container's own copy of the image's files and a fresh folder per volume, owned by its user. */
function stageFiles(dir: string, imageDir: string, image: ImageConfig, definition: ContainerDefinition, ids: { uid: number; gid: number }) {
  const root = join(dir, 'image');
  mkdirSync(root);
  const tops = new Set<string>();
  for (const copy of image.copies) {
    const top = copy.destination.split('/')[1] ?? '';
    if (!top || SYSTEM_FOLDERS.includes(top))
      throw new ContainerStartError(`COPY to ${copy.destination}: the image's system folders are this machine's here`);
    tops.add(top);
    // `COPY a b /dir/` copies into the folder; `COPY a /path` (one source, no slash) names the file.
    const intoFolder = copy.sources.length > 1 || copy.destination.endsWith('/') || copy.raw.endsWith('/');
    for (const source of copy.sources) {
      const target = intoFolder ? join(root, copy.destination, posix.basename(source)) : join(root, copy.destination);
      cpSync(join(imageDir, source), target, { recursive: true });
    }
  }
  chmodTree(root);
  const bind = definition.ReadonlyRootFilesystem ? '--ro-bind' : '--bind';
  const binds = [...tops].flatMap((top) => [bind, join(root, top), `/${top}`]);
  const mounted = new Set<string>();
  for (const mount of definition.MountPoints ?? []) {
    const volume = join(dir, 'volumes', mount.SourceVolume);
    mkdirSync(volume, { recursive: true, mode: 0o755 });
    if (process.getuid?.() === 0) chownSync(volume, ids.uid, ids.gid);
    binds.push(mount.ReadOnly ? '--ro-bind' : '--bind', volume, mount.ContainerPath);
    mounted.add(mount.ContainerPath);
  }
  // A writable root file system has a writable /tmp; a read-only one only what a volume mounts there.
  if (!definition.ReadonlyRootFilesystem && !mounted.has('/tmp')) {
    const scratch = join(dir, 'tmp');
    mkdirSync(scratch, { mode: 0o1777 });
    binds.push('--bind', scratch, '/tmp');
  }
  return binds;
}

export interface StartContainerOptions {
  definition: ContainerDefinition;
  /** The image asset's folder (cdk.out/asset.{hash}) and its Dockerfile. */
  imageDir: string;
  dockerfile?: string;
  /** The container's variables: the definition's with the run's overrides applied. */
  environment: Record<string, string>;
  /** The run's command override (ECS containerOverrides.command). */
  command?: string[];
  /** What the task's role gives the container: its keys (which the IAM proxy knows it by) and the endpoint. */
  credentials: { accessKeyId: string; secretAccessKey: string; endpoint: string; region: string };
  memoryMiB: number;
  caps: SandboxCapabilities;
  /** An id unique on this machine (the memory cgroup's name). */
  id: string;
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
}

/** The command: join the cgroups, drop to the container's user, bubblewrap with the image's files, the entry. */
function commandOf(options: StartContainerOptions, image: ImageConfig, binds: string[], ids: { uid: number; gid: number }) {
  const { definition, credentials } = options;
  const argv = [...(definition.EntryPoint ?? image.entryPoint), ...(options.command ?? definition.Command ?? image.command)];
  if (argv[0] !== 'node')
    throw new ContainerStartError(`the entry ${JSON.stringify(argv)} is not node, the one program the image has here`);
  const environment: Record<string, string> = {
    PATH: IMAGE_PATH,
    HOME: ids.uid === 0 ? '/root' : '/home/node',
    ...image.environment,
    // What Fargate gives every container; the role's keys stand for its credentials endpoint.
    AWS_EXECUTION_ENV: 'AWS_ECS_FARGATE',
    AWS_REGION: credentials.region,
    AWS_DEFAULT_REGION: credentials.region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_ENDPOINT_URL: credentials.endpoint,
    ...options.environment,
  };
  const drop = process.getuid?.() === 0 ? ['setpriv', `--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups'] : [];
  return [
    ...drop,
    'bwrap',
    '--unshare-all',
    '--share-net',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    // The entry is the container's PID 1, as without an init in Docker: it ignores a SIGTERM it does not handle.
    '--as-pid-1',
    '--info-fd',
    '3',
    ...['--ro-bind', '/usr', '/usr', '--ro-bind-try', '/lib', '/lib', '--ro-bind-try', '/lib64', '/lib64'],
    ...['--ro-bind-try', '/etc/hosts', '/etc/hosts', '--ro-bind-try', '/etc/resolv.conf', '/etc/resolv.conf'],
    ...['--ro-bind', dirname(nodeOfMajor(image.nodeMajor)), '/usr/local/bin', '--proc', '/proc', '--dev', '/dev'],
    ...binds,
    ...Object.entries(environment).flatMap(([name, value]) => ['--setenv', name, value]),
    '--chdir',
    definition.WorkingDirectory ?? image.workingDirectory,
    '--',
    // bubblewrap's --chdir sets PWD, which a container's environment does not have; env execs the entry as PID 1.
    '/usr/bin/env',
    '-u',
    'PWD',
    ...argv,
  ];
}

/** The host pid of the container's PID 1, from bubblewrap's info (fd 3). */
function childPid(info: Readable): Promise<number | null> {
  return new Promise((resolve) => {
    let text = '';
    info.setEncoding('utf8');
    info.on('data', (chunk: string) => {
      text += chunk;
      const pid = /"child-pid":\s*(\d+)/.exec(text)?.[1];
      if (pid) resolve(Number(pid));
    });
    info.on('error', () => resolve(null));
    info.on('close', () => resolve(null));
  });
}

/**
 * Starts the container. Throws ContainerStartError for an image or definition it cannot run (nothing is
 * left behind); the returned container's `exited` says how it ended, as `docker wait` does.
 */
export async function startContainer(options: StartContainerOptions): Promise<RunningContainer> {
  const image = readDockerfile(options.imageDir, options.dockerfile);
  if (options.caps.isolation !== 'bwrap')
    throw new ContainerStartError('a container runs in bubblewrap, which this machine does not offer');
  const ids = userIds(options.definition.User ?? image.user);
  mkdirSync(join(tmpdir(), 'slipway-containers'), { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'slipway-containers', `${options.id}-`));
  // The container's user reaches its files through this folder.
  chmodSync(dir, 0o755);
  let command: string[];
  try {
    command = commandOf(options, image, stageFiles(dir, options.imageDir, image, options.definition, ids), ids);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const memoryBytes = options.memoryMiB * 1024 * 1024;
  let cgroups: ProcessCgroups;
  try {
    cgroups = makeCgroups(options.caps, `slipway-fn-${options.id}`, { memoryBytes, pids: DEFAULT_PIDS_LIMIT });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const [shell, ...args] = inCgroups(cgroups, command);
  const child = spawn(shell!, args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], env: {} });
  const memory = watchMemory(child, cgroups.memory, memoryBytes);
  for (const stream of ['stdout', 'stderr'] as const)
    child[stream]!.on('data', (chunk: Buffer) => options.onOutput?.(stream, chunk.toString('utf8')));
  const pid = childPid(child.stdio[3] as Readable);
  const exited = new Promise<ContainerExit>((resolve) => {
    child.once('close', async (code, signal) => {
      memory.stop();
      const outOfMemory = memory.outOfMemory();
      for (const path of cgroups.paths) await removeCgroup(path);
      rmSync(dir, { recursive: true, force: true });
      const signalNumber = signal ? (({ SIGKILL: 9, SIGTERM: 15 } as Record<string, number>)[signal] ?? 1) : 0;
      resolve({ exitCode: signal ? 128 + signalNumber : (code ?? 1), outOfMemory });
    });
  });
  let ended = false;
  void exited.then(() => (ended = true));
  const signal = async (name: NodeJS.Signals) => {
    const target = await pid;
    if (ended) return;
    try {
      if (target) process.kill(target, name);
      else child.kill('SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  };
  return {
    exited,
    stop(graceMs) {
      void signal('SIGTERM');
      const timer = setTimeout(() => void signal('SIGKILL'), graceMs);
      void exited.then(() => clearTimeout(timer));
    },
  };
}
