import { timingSafeEqual, createHash } from 'node:crypto';
import type { GitEvent } from '../events.ts';
import { type JsonObject } from '../../json.ts';

/**
 * GitLab's webhook deliveries (docs/builds.md): `X-Gitlab-Token` carries the
 * hook's secret token as is, `X-Gitlab-Event` is `Push Hook`, `Merge Request
 * Hook`, ..., and `X-Gitlab-Event-UUID` identifies the delivery (the same on
 * a retry).
 */

/** Whether the token is the secret, compared in constant time (both hashed first, so their lengths may differ). */
export function gitlabTokenMatches(header: string | undefined, secret: string): boolean {
  if (!header) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(header), digest(secret));
}

type Json = JsonObject;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function repoUrls(payload: Json): string[] {
  const project = obj(payload.project);
  const repository = obj(payload.repository);
  return [
    project.git_http_url,
    project.git_ssh_url,
    project.web_url,
    repository.git_http_url,
    repository.git_ssh_url,
    repository.homepage,
  ].filter((u): u is string => typeof u === 'string');
}

const ZERO_SHA = /^0+$/;

function pushEvent(payload: Json, urls: string[], repoDefaultBranch: string | null): GitEvent | null {
  const ref = str(payload.ref);
  if (!ref) return null;
  const after = str(payload.after);
  const checkout = str(payload.checkout_sha);
  const deleted = (after !== null && ZERO_SHA.test(after)) || (checkout === null && after === null);
  const sha = deleted ? null : (checkout ?? after);
  const commits = Array.isArray(payload.commits) ? payload.commits.map(obj) : [];
  const head = commits.find((c) => c.id === sha) ?? commits[commits.length - 1];
  return {
    kind: 'push',
    repoUrls: urls,
    branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null,
    deleted,
    commitSha: sha,
    commitMessage: head ? str(head.message) : null,
    repoDefaultBranch,
  };
}

function mergeRequestEvent(payload: Json, urls: string[], repoDefaultBranch: string | null): GitEvent | null {
  const attributes = obj(payload.object_attributes);
  const last = obj(attributes.last_commit);
  const number = attributes.iid;
  const branch = str(attributes.source_branch);
  const sha = str(last.id);
  if (typeof number !== 'number' || !branch || !sha) return null;
  const action = str(attributes.action);
  const mapped =
    action === 'open' || action === 'reopen'
      ? 'opened'
      : action === 'update'
        ? 'updated'
        : action === 'close' || action === 'merge'
          ? 'closed'
          : 'other';
  return {
    kind: 'merge_request',
    repoUrls: urls,
    number,
    action: mapped,
    branch,
    commitSha: sha,
    commitMessage: str(last.message),
    repoDefaultBranch,
  };
}

/** A GitLab payload as a GitEvent; null when it is not one GitLab would send for this event type. */
export function gitlabEvent(eventType: string, payload: Json): GitEvent | null {
  const urls = repoUrls(payload);
  const repoDefaultBranch = str(obj(payload.project).default_branch);
  if (eventType === 'Push Hook') return pushEvent(payload, urls, repoDefaultBranch);
  if (eventType === 'Merge Request Hook') return mergeRequestEvent(payload, urls, repoDefaultBranch);
  return { kind: 'other', repoUrls: urls, eventType: eventType.toLowerCase().replace(/\s+/g, '_') };
}
