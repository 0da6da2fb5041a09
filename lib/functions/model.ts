import { config } from '../config.ts';
/**
 * Functions: the names, limits and records every part shares (build at
 * publish, the door, the hosts, the API). Spec: "Function" and the function
 * rows of Limits.
 */

/** File name without extension: lowercase letters, digits and hyphens, starting and ending with a letter or digit, at most 128 characters. */
export const FUNCTION_NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$/;
/** `{name}-{subdomain}` is one DNS label. */
export const MAX_FUNCTION_LABEL_LENGTH = 63;
/** Over this a function's build fails. */
export const MAX_FUNCTION_BUNDLE_BYTES = 900 * 1024;
/** HTTPS door request body; over it, 413. */
export const MAX_DOOR_BODY_BYTES = 10 * 1024 * 1024;
/** Closed-beta runtime limits, the same for every enrolled team. */
export const FUNCTION_MEMORY_MB = 512;
export const CONCURRENT_REQUESTS_PER_INSTANCE = 10;
export const MAX_INSTANCES_PER_FUNCTION = 3;

/** The request budget: 60 s, shortened by FUNCTIONS_BUDGET_MS for tests. */
export function functionBudgetMs(): number {
  return config.functionsBudgetMs();
}

/** An instance without traffic this long is stopped (about two minutes); FUNCTIONS_IDLE_MS shortens it for tests. */
export function functionIdleMs(): number {
  return config.functionsIdleMs();
}

/** The DNS label of a function's hostname. */
export const functionLabel = (name: string, subdomain: string) => `${name}-${subdomain}`;

/**
 * One function of one deployment, as the build records it (table item
 * `PROJECT#{project_id}` / `FUNCTION#{deployment_id}#{name}`). Promote and
 * rollback only move `live_deployment_id`: the live deployment's records are
 * the functions that answer.
 */
export interface FunctionRecord {
  /** Stable per project and name across deployments (telemetry groups by it). */
  function_id: string;
  name: string;
  project_id: string;
  team_id: string;
  deployment_id: string;
  /** The entry file, as in the manifest (`functions/hello.ts`, or under root_directory). */
  entry_path: string;
  /** BUNDLES bucket key of the built ES module. */
  bundle_key: string;
  bundle_sha256: string;
  bundle_bytes: number;
  created_at: string;
  /**
   * The function's `config.schedule` as its file exports it (lib/functions/schedule-config.ts), or null: it runs
   * on that schedule while its deployment is live (lib/functions/schedules.ts). Absent where a function is run
   * without a build record (`slipway dev`).
   */
  schedule?: string | null;
}

/** What a host needs to run a function: the record plus where it answers. */
export interface DeployedFunction extends FunctionRecord {
  subdomain: string;
  /** `https://{name}-{subdomain}.{function_domain}/` (locally `http://...fn.localhost:PORT/`). */
  url: string;
}

/** BUNDLES key of a function's bundle. */
export const functionBundleKey = (teamId: string, projectId: string, deploymentId: string, name: string) =>
  `functions/${teamId}/${projectId}/${deploymentId}/${name}.mjs`;
