import { createHmac, timingSafeEqual } from 'node:crypto';
import type { GitEvent } from '../events.ts';
import { type JsonObject } from '../../json.ts';

/**
 * GitHub's webhook deliveries (docs/builds.md): `X-Hub-Signature-256:
 * sha256=<hex HMAC-SHA256 of the raw body under the hook's secret>`,
 * `X-GitHub-Event` (`push`, `pull_request`, `ping`, ...) and
 * `X-GitHub-Delivery` (the delivery's id, the same on a redelivery).
 */

/** The header as GitHub sends it, for tests and local tooling. */
export function githubSignature(secret: string, rawBody: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Whether the header is the body's signature under `secret`, compared in constant time. */
export function githubSignatureMatches(header: string | undefined, rawBody: Buffer, secret: string): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/i.test(header.trim())) return false;
  const given = Buffer.from(header.trim().slice(7), 'hex');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(given, expected);
}

type Json = JsonObject;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {});
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function repoUrls(payload: Json): string[] {
  const repo = obj(payload.repository);
  return [repo.clone_url, repo.ssh_url, repo.git_url, repo.html_url, repo.url].filter((u): u is string => typeof u === 'string');
}

const ZERO_SHA = /^0+$/;

/** A GitHub payload as a GitEvent; null when it is not one GitHub would send for this event type. */
export function githubEvent(eventType: string, payload: Json): GitEvent | null {
  const urls = repoUrls(payload);
  const repoDefaultBranch = str(obj(payload.repository).default_branch) ?? str(obj(payload.repository).master_branch);
  if (eventType === 'push') {
    const ref = str(payload.ref);
    if (!ref) return null;
    const head = obj(payload.head_commit);
    const after = str(payload.after);
    const deleted = payload.deleted === true || (after !== null && ZERO_SHA.test(after));
    return {
      kind: 'push',
      repoUrls: urls,
      branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null,
      deleted,
      commitSha: deleted ? null : (str(head.id) ?? after),
      commitMessage: str(head.message),
      repoDefaultBranch,
    };
  }
  if (eventType === 'pull_request') {
    const pr = obj(payload.pull_request);
    const headRef = obj(pr.head);
    const number = typeof payload.number === 'number' ? payload.number : pr.number;
    const branch = str(headRef.ref);
    const sha = str(headRef.sha);
    if (typeof number !== 'number' || !branch || !sha) return null;
    const action = str(payload.action);
    const mapped =
      action === 'opened' || action === 'reopened'
        ? 'opened'
        : action === 'synchronize'
          ? 'updated'
          : action === 'closed'
            ? 'closed'
            : 'other';
    return {
      kind: 'merge_request',
      repoUrls: urls,
      number,
      action: mapped,
      branch,
      commitSha: sha,
      commitMessage: str(pr.title),
      repoDefaultBranch,
    };
  }
  return { kind: 'other', repoUrls: urls, eventType };
}
