import type { BuildTarget, BuildTrigger } from './events.ts';
import { previewUrl } from '../sites/preview-hosts.ts';
import type { ProjectItem } from '../projects/records.ts';
import type { DeploymentItem } from '../deployments/records.ts';

/**
 * The build fields of a deployment as the API shows them (docs/builds.md).
 * A direct upload's deployment has `trigger` null and no branch or commit.
 * `preview_url` follows the project's current preview_slug, so changing the
 * slug moves every preview's address at once.
 */
export interface DeploymentBuildFields {
  trigger: BuildTrigger | null;
  target: BuildTarget | null;
  branch: string | null;
  commit_sha: string | null;
  commit_message: string | null;
  merge_request: number | null;
  preview_url: string | null;
  queued_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  /** The classified failure line of a failed build; never raw output. */
  failure_message: string | null;
  /** Why a build was skipped: `skip_ci`, `auto_deploy_paused`, `team_suspended`. */
  skip_reason: string | null;
  /** Lines in the build's log (GET .../log reads them from a cursor). */
  log_lines: number;
}

export type { DeploymentStatus } from '../deployments/records.ts';

const text = (value: unknown) => (typeof value === 'string' ? value : null);

export function deploymentBuildFields(item: DeploymentItem, project: ProjectItem): DeploymentBuildFields {
  const label = text(item.preview_label);
  const slug = text(project.preview_slug);
  return {
    trigger: (text(item.trigger) as BuildTrigger | null) ?? null,
    target: (text(item.target) as BuildTarget | null) ?? null,
    branch: text(item.branch),
    commit_sha: text(item.commit_sha),
    commit_message: text(item.commit_message),
    merge_request: typeof item.merge_request === 'number' ? item.merge_request : null,
    preview_url: item.target === 'preview' && label && slug ? previewUrl(label, slug) : null,
    queued_at: text(item.queued_at),
    started_at: text(item.started_at),
    finished_at: text(item.finished_at),
    failure_message: text(item.failure_message),
    skip_reason: text(item.skip_reason),
    log_lines: typeof item.log_lines === 'number' ? item.log_lines : Array.isArray(item.build_log) ? item.build_log.length : 0,
  };
}
