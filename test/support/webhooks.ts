import { randomUUID } from 'node:crypto';
import { githubSignature } from '../../lib/builds/webhooks/github.ts';
import type { TestPlatform } from './platform.ts';

/**
 * Webhook deliveries shaped like GitHub's and GitLab's documented payloads
 * (the fields the platform reads, and a few around them), signed as the
 * forges sign them, sent over HTTP to the local API.
 */
export interface PushInput {
  repoUrl: string;
  branch: string;
  sha: string | null;
  message?: string;
  defaultBranch?: string;
  deleted?: boolean;
}

const ZERO = '0000000000000000000000000000000000000000';

export function githubPushPayload(input: PushInput) {
  return {
    ref: `refs/heads/${input.branch}`,
    before: ZERO,
    after: input.deleted ? ZERO : input.sha,
    created: false,
    deleted: input.deleted ?? false,
    forced: false,
    head_commit: input.deleted ? null : { id: input.sha, message: input.message ?? 'A change', timestamp: new Date().toISOString() },
    repository: {
      full_name: 'acme/site',
      clone_url: input.repoUrl,
      ssh_url: 'git@github.invalid:acme/site.git',
      html_url: 'https://github.invalid/acme/site',
      default_branch: input.defaultBranch ?? 'main',
    },
    pusher: { name: 'dev', email: 'dev@example.test' },
  };
}

export function githubPullRequestPayload(input: {
  repoUrl: string;
  number: number;
  action: string;
  branch: string;
  sha: string;
  title?: string;
}) {
  return {
    action: input.action,
    number: input.number,
    pull_request: {
      number: input.number,
      title: input.title ?? 'A change',
      head: { ref: input.branch, sha: input.sha },
      base: { ref: 'main' },
      merged: input.action === 'closed',
    },
    repository: { full_name: 'acme/site', clone_url: input.repoUrl, default_branch: 'main' },
  };
}

export function gitlabPushPayload(input: PushInput) {
  return {
    object_kind: 'push',
    ref: `refs/heads/${input.branch}`,
    before: ZERO,
    after: input.deleted ? ZERO : input.sha,
    checkout_sha: input.deleted ? null : input.sha,
    commits: input.deleted ? [] : [{ id: input.sha, message: input.message ?? 'A change' }],
    project: {
      git_http_url: input.repoUrl,
      git_ssh_url: 'git@gitlab.invalid:acme/site.git',
      web_url: 'https://gitlab.invalid/acme/site',
      default_branch: input.defaultBranch ?? 'main',
    },
    repository: { git_http_url: input.repoUrl },
  };
}

export function gitlabMergeRequestPayload(input: {
  repoUrl: string;
  iid: number;
  action: string;
  branch: string;
  sha: string;
  message?: string;
}) {
  return {
    object_kind: 'merge_request',
    object_attributes: {
      iid: input.iid,
      action: input.action,
      source_branch: input.branch,
      target_branch: 'main',
      last_commit: { id: input.sha, message: input.message ?? 'A change' },
    },
    project: { git_http_url: input.repoUrl, default_branch: 'main' },
  };
}

export async function sendGithub(
  platform: TestPlatform,
  input: { event: string; payload: unknown; secret: string | null; delivery?: string; signature?: string },
) {
  const body = JSON.stringify(input.payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-github-event': input.event,
    'x-github-delivery': input.delivery ?? randomUUID(),
  };
  const signature = input.signature ?? (input.secret ? githubSignature(input.secret, body) : undefined);
  if (signature) headers['x-hub-signature-256'] = signature;
  return platform.api('POST', '/api/v1/webhooks/git/github', { rawBody: body, headers });
}

export async function sendGitlab(
  platform: TestPlatform,
  input: { event: string; payload: unknown; token: string | null; delivery?: string },
) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-gitlab-event': input.event,
    'x-gitlab-event-uuid': input.delivery ?? randomUUID(),
  };
  if (input.token) headers['x-gitlab-token'] = input.token;
  return platform.api('POST', '/api/v1/webhooks/git/gitlab', { rawBody: JSON.stringify(input.payload), headers });
}
