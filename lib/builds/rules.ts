import picomatch from 'picomatch';
import type { GitEvent, MergeRequestEvent, PushEvent } from './events.ts';
import { branchLabel, mergeRequestLabel } from '../sites/preview-hosts.ts';

/**
 * Which pushes build what (docs/builds.md, "Which pushes build what"): pure
 * decisions on one project's settings and one event, no I/O.
 */
export interface ProjectRules {
  default_branch: string | null;
  auto_deploy_enabled: boolean;
  auto_deploy_paused_at: string | null;
  mr_previews_enabled: boolean;
  preview_branch_mode: 'all' | 'none' | 'custom';
  preview_branch_include: string[];
  preview_branch_exclude: string[];
}

export type Decision =
  /** A build: production or a preview under `label`. */
  | { action: 'build'; target: 'production' | 'preview'; label: string | null; trigger: 'push' | 'merge_request' }
  /** Recorded as a `skipped` build, built never. */
  | {
      action: 'skip';
      reason: 'skip_ci' | 'auto_deploy_paused';
      target: 'production' | 'preview';
      label: string | null;
      trigger: 'push' | 'merge_request';
    }
  /** The production branch was deleted: noted on the project, its preview (if any) taken down. */
  | { action: 'production_branch_deleted'; label: string }
  /** A branch or merge request preview to take down. */
  | { action: 'take_down_preview'; label: string }
  /** Nothing to do, and why. */
  | { action: 'ignore'; reason: string };

const SKIP_CI = /\[(?:skip ci|ci skip)\]/i;

/** Whether a commit message asks that nothing be built. */
export function asksToSkip(message: string | null | undefined): boolean {
  return typeof message === 'string' && SKIP_CI.test(message);
}

/**
 * The preview branch policy. Patterns are globs matched against the whole
 * branch name: `*` is any run of characters but `/`, `**` any run including
 * `/`, `?` one character, `{a,b}` either, `[abc]` one of. An exclude match
 * always wins; an empty include list includes every branch.
 */
export function branchPolicyAllows(
  rules: Pick<ProjectRules, 'preview_branch_mode' | 'preview_branch_include' | 'preview_branch_exclude'>,
  branch: string,
): boolean {
  if (rules.preview_branch_mode === 'none') return false;
  if (rules.preview_branch_mode === 'all') return true;
  const matches = (patterns: string[]) => patterns.length > 0 && picomatch(patterns, { dot: true, nonegate: true })(branch);
  if (matches(rules.preview_branch_exclude)) return false;
  return rules.preview_branch_include.length === 0 || matches(rules.preview_branch_include);
}

/** The production branch: the project's own setting, else the forge's default the push reports. */
export function productionBranch(rules: Pick<ProjectRules, 'default_branch'>, repoDefaultBranch: string | null): string | null {
  return rules.default_branch ?? repoDefaultBranch;
}

function decidePush(rules: ProjectRules, event: PushEvent): Decision {
  if (event.branch === null) return { action: 'ignore', reason: 'not_a_branch' };
  const production = productionBranch(rules, event.repoDefaultBranch) === event.branch;
  if (event.deleted) {
    const label = branchLabel(event.branch);
    return production ? { action: 'production_branch_deleted', label } : { action: 'take_down_preview', label };
  }
  if (!event.commitSha) return { action: 'ignore', reason: 'no_commit' };
  const target = production ? 'production' : 'preview';
  const label = production ? null : branchLabel(event.branch);
  if (production && !rules.auto_deploy_enabled) return { action: 'ignore', reason: 'auto_deploy_disabled' };
  // The policy never applies to the production branch.
  if (!production && !branchPolicyAllows(rules, event.branch)) return { action: 'ignore', reason: 'preview_branch_policy' };
  if (asksToSkip(event.commitMessage)) return { action: 'skip', reason: 'skip_ci', target, label, trigger: 'push' };
  if (rules.auto_deploy_paused_at) return { action: 'skip', reason: 'auto_deploy_paused', target, label, trigger: 'push' };
  return { action: 'build', target, label, trigger: 'push' };
}

function decideMergeRequest(rules: ProjectRules, event: MergeRequestEvent): Decision {
  const label = mergeRequestLabel(event.number);
  if (event.action === 'closed') return { action: 'take_down_preview', label };
  if (event.action === 'other') return { action: 'ignore', reason: 'merge_request_action' };
  if (!rules.mr_previews_enabled) return { action: 'ignore', reason: 'mr_previews_disabled' };
  if (asksToSkip(event.commitMessage)) return { action: 'skip', reason: 'skip_ci', target: 'preview', label, trigger: 'merge_request' };
  if (rules.auto_deploy_paused_at)
    return { action: 'skip', reason: 'auto_deploy_paused', target: 'preview', label, trigger: 'merge_request' };
  return { action: 'build', target: 'preview', label, trigger: 'merge_request' };
}

export function decide(rules: ProjectRules, event: GitEvent): Decision {
  if (event.kind === 'push') return decidePush(rules, event);
  if (event.kind === 'merge_request') return decideMergeRequest(rules, event);
  return { action: 'ignore', reason: `event_${event.eventType}` };
}
