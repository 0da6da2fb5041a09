/**
 * Where builds run (docs/builds.md): domain code asks a build host to start a
 * build, to report on it, to stop it and to let go of it; it never spawns a
 * process or calls CodeBuild itself. The builds worker is given its host
 * (lib/builds/builds-worker.ts): the local platform's sandboxed one
 * (lib/local/builds/), or in the stack the CodeBuild host
 * (lib/builds/cloud-host.ts). The same build script runs in both.
 */
export interface BuildJob {
  deploymentId: string;
  projectId: string;
  teamId: string;
  git: {
    /** The address fetched: checked before (lib/builds/repo-access.ts). */
    url: string;
    /** The commit, or null to fetch the head of `ref` (a manual build without commit_sha). */
    commit: string | null;
    ref: string;
    /** `Basic ...` or `Bearer ...`; never printed, never given to install or build. */
    authorization: string | null;
    /** The address as the log shows it (no credentials). */
    displayUrl: string;
  };
  rootDirectory: string | null;
  /** `rootDirectory` as a deployment path prefix ('' or `dir/`): where functions go in the published folder. */
  rootPrefix: string;
  packageManager: string | null;
  buildCommand: string | null;
  outputDir: string;
  /** Production builds publish functions; previews skip the directory. */
  includeFunctions: boolean;
  /** The project's variables of the build's environment, decrypted: install and build see them, the log masks them. */
  env: Record<string, string>;
  budgetMs: number;
  memoryMb: number;
  /** A step silent this long prints that it still runs (BUILD_HEARTBEAT_MS). */
  heartbeatMs: number;
}

/** The build script's job fields of a build (lib/builds/script/build.mjs): the same in every host. */
export function scriptJob(job: BuildJob) {
  return {
    git: {
      url: job.git.url,
      commit: job.git.commit ?? `refs/heads/${job.git.ref}`,
      authorization: job.git.authorization,
      display_url: job.git.displayUrl,
    },
    root_directory: job.rootDirectory,
    root_prefix: job.rootPrefix,
    package_manager: job.packageManager,
    build_command: job.buildCommand,
    output_dir: job.outputDir,
    include_functions: job.includeFunctions,
    env: job.env,
    heartbeat_ms: job.heartbeatMs,
  };
}

export type BuildState = 'running' | 'succeeded' | 'failed' | 'lost';

export interface BuildReport {
  state: BuildState;
  /** Log lines from the line asked for on, as the script printed them (masked). */
  lines: string[];
  failure?: { line: string; kind: 'user' | 'platform' };
  /** A folder on this machine holding what to publish (succeeded only). */
  outputDir?: string;
  /** The commit that was built (a manual build of a branch head learns it here). */
  commit?: { sha: string; message: string | null };
}

export interface BuildHost {
  /** Starts the build; the handle names it in later calls, across worker calls. */
  start(job: BuildJob): Promise<string>;
  report(handle: string, fromLine: number): Promise<BuildReport>;
  /** Stops a running build (a newer push, the time budget); a stopped build reports `failed`. */
  stop(handle: string): Promise<void>;
  /** Lets go of what the build left on this machine (after publishing, or when it ended). */
  release(handle: string): Promise<void>;
}
