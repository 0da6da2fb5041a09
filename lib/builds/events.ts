/**
 * A Git webhook delivery as the build rules read it, whichever forge sent it
 * (lib/builds/webhooks/github.ts, gitlab.ts turn their payloads into these).
 */
export interface PushEvent {
  kind: 'push';
  /** Every address the payload gives for the repository (https, ssh, web). */
  repoUrls: string[];
  /** The branch pushed to; null for a tag or another ref. */
  branch: string | null;
  /** The push deleted the branch. */
  deleted: boolean;
  commitSha: string | null;
  commitMessage: string | null;
  /** The forge's default branch of the repository, as the payload reports it. */
  repoDefaultBranch: string | null;
}

export interface MergeRequestEvent {
  kind: 'merge_request';
  repoUrls: string[];
  number: number;
  /** opened (and reopened), updated (new commits), closed (and merged); anything else is `other`. */
  action: 'opened' | 'updated' | 'closed' | 'other';
  branch: string;
  commitSha: string;
  commitMessage: string | null;
  repoDefaultBranch: string | null;
}

/** An event that builds nothing whatever the project says (ping, an unknown event type). */
export interface OtherEvent {
  kind: 'other';
  repoUrls: string[];
  eventType: string;
}

export type GitEvent = PushEvent | MergeRequestEvent | OtherEvent;

export type { BuildTarget, BuildTrigger } from '../deployments/records.ts';
