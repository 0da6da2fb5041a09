import { describe, expect, it } from 'vitest';
import { failureSignature } from '../../lib/builds/classify.ts';
import type { MergeRequestEvent, PushEvent } from '../../lib/builds/events.ts';
import { BRANCH_LABEL_MAX, branchLabel, mergeRequestLabel, parsePreviewHost, previewHost } from '../../lib/sites/preview-hosts.ts';
import { buildSettings, FRAMEWORK_PRESETS } from '../../lib/builds/presets.ts';
import { repoKey } from '../../lib/git/repo-url.ts';
import { asksToSkip, branchPolicyAllows, decide, type ProjectRules } from '../../lib/builds/rules.ts';
import { githubEvent, githubSignature, githubSignatureMatches } from '../../lib/builds/webhooks/github.ts';
import { gitlabEvent, gitlabTokenMatches } from '../../lib/builds/webhooks/gitlab.ts';
import { FRAMEWORKS } from '../../lib/projects/projects.ts';

describe('repository addresses', () => {
  it('reduce https, ssh and scp forms, .git suffixes and host case to one key', () => {
    const key = 'github.com/Acme/Site';
    for (const url of [
      'https://github.com/Acme/Site.git',
      'https://GitHub.COM/Acme/Site',
      'git@github.com:Acme/Site.git',
      'ssh://git@github.com/Acme/Site.git',
      'ssh://git@github.com:22/Acme/Site',
      'https://github.com:443/Acme/Site/',
    ]) {
      expect(repoKey(url), url).toBe(key);
    }
    expect(repoKey('http://127.0.0.1:8080/site.git')).toBe('127.0.0.1:8080/site');
    expect(repoKey('ftp://example.com/x')).toBeNull();
    expect(repoKey('https://example.com/')).toBeNull();
    expect(repoKey('https://example.com/a/../b')).toBe('example.com/b');
  });
});

describe('preview labels and hosts', () => {
  it('make a branch a DNS label, cut long ones with a stable hash, and keep merge-request labels apart', () => {
    expect(branchLabel('Feature/New_Look')).toBe('feature-new-look');
    expect(branchLabel('--weird..name--')).toBe('weird-name');
    const long = `feature/${'x'.repeat(80)}`;
    expect(branchLabel(long)).toHaveLength(BRANCH_LABEL_MAX);
    expect(branchLabel(long)).toBe(branchLabel(long));
    expect(branchLabel(long)).not.toBe(branchLabel(`${long}y`));
    expect(branchLabel('mr-7')).not.toBe(mergeRequestLabel(7));
    expect(`${branchLabel(long)}-${'s'.repeat(20)}`.length).toBeLessThanOrEqual(63);
  });

  it('parse `{label}-{slug}.previews.{site_domain}` at the last hyphen', () => {
    expect(parsePreviewHost('feature-new-look-abc123.previews.localhost:3000', 'localhost')).toEqual({
      label: 'feature-new-look',
      slug: 'abc123',
    });
    expect(previewHost('mr-7', 'abc123', 'slipway.site')).toBe('mr-7-abc123.previews.slipway.site');
    expect(parsePreviewHost('abc123.previews.localhost', 'localhost')).toBeNull();
    expect(parsePreviewHost('site.localhost', 'localhost')).toBeNull();
    expect(parsePreviewHost('a-b.c.previews.localhost', 'localhost')).toBeNull();
  });
});

const rules = (over: Partial<ProjectRules> = {}): ProjectRules => ({
  default_branch: 'main',
  auto_deploy_enabled: true,
  auto_deploy_paused_at: null,
  mr_previews_enabled: true,
  preview_branch_mode: 'all',
  preview_branch_include: [],
  preview_branch_exclude: [],
  ...over,
});
const push = (branch: string, extra: Partial<PushEvent> = {}): PushEvent => ({
  kind: 'push',
  repoUrls: [],
  branch,
  deleted: false,
  commitSha: 'a'.repeat(40),
  commitMessage: 'x',
  repoDefaultBranch: 'main',
  ...extra,
});

describe('which pushes build what', () => {
  it('builds production from the default branch only when auto-deploy is on and not paused', () => {
    expect(decide(rules(), push('main'))).toEqual({ action: 'build', target: 'production', label: null, trigger: 'push' });
    expect(decide(rules({ auto_deploy_enabled: false }), push('main'))).toEqual({ action: 'ignore', reason: 'auto_deploy_disabled' });
    expect(decide(rules({ auto_deploy_paused_at: 'x' }), push('main'))).toMatchObject({ action: 'skip', reason: 'auto_deploy_paused' });
    expect(decide(rules({ default_branch: null }), push('main'))).toMatchObject({ target: 'production' });
    expect(decide(rules(), push('main', { commitMessage: 'Docs [CI SKIP]' }))).toMatchObject({ action: 'skip', reason: 'skip_ci' });
    expect(decide(rules(), push('main', { deleted: true, commitSha: null }))).toEqual({
      action: 'production_branch_deleted',
      label: 'main',
    });
    expect(decide(rules(), { ...push('main'), branch: null })).toEqual({ action: 'ignore', reason: 'not_a_branch' });
  });

  it('applies the preview policy to other branches: all, none, custom with globs where exclude wins', () => {
    const custom = {
      preview_branch_mode: 'custom' as const,
      preview_branch_include: ['feature/**', 'release-?'],
      preview_branch_exclude: ['feature/wip-*'],
    };
    expect(branchPolicyAllows(custom, 'feature/a/b')).toBe(true);
    expect(branchPolicyAllows(custom, 'feature/wip-1')).toBe(false);
    expect(branchPolicyAllows(custom, 'release-2')).toBe(true);
    expect(branchPolicyAllows(custom, 'release-22')).toBe(false);
    expect(branchPolicyAllows({ ...custom, preview_branch_include: [] }, 'anything')).toBe(true);
    expect(branchPolicyAllows({ ...custom, preview_branch_mode: 'none' }, 'feature/a')).toBe(false);
    expect(decide(rules(custom), push('hotfix'))).toEqual({ action: 'ignore', reason: 'preview_branch_policy' });
    expect(decide(rules(custom), push('feature/x'))).toEqual({ action: 'build', target: 'preview', label: 'feature-x', trigger: 'push' });
  });

  it('builds merge requests on their own setting, never by the branch policy', () => {
    const mr = (action: 'opened' | 'updated' | 'closed'): MergeRequestEvent => ({
      kind: 'merge_request',
      repoUrls: [],
      number: 4,
      action,
      branch: 'f',
      commitSha: 'b'.repeat(40),
      commitMessage: null,
      repoDefaultBranch: 'main',
    });
    expect(decide(rules({ preview_branch_mode: 'none' }), mr('opened'))).toEqual({
      action: 'build',
      target: 'preview',
      label: 'mr-4',
      trigger: 'merge_request',
    });
    expect(decide(rules({ mr_previews_enabled: false }), mr('updated'))).toEqual({ action: 'ignore', reason: 'mr_previews_disabled' });
    expect(decide(rules({ mr_previews_enabled: false }), mr('closed'))).toEqual({ action: 'take_down_preview', label: 'mr-4' });
    expect(asksToSkip('x [skip ci] y')).toBe(true);
    expect(asksToSkip('skip ci')).toBe(false);
  });
});

describe('webhook signatures and payloads', () => {
  it('checks GitHub HMAC-SHA256 signatures of the raw body and GitLab tokens', () => {
    const body = Buffer.from('{"a":1}');
    expect(githubSignatureMatches(githubSignature('s3cret', body), body, 's3cret')).toBe(true);
    expect(githubSignatureMatches(githubSignature('other', body), body, 's3cret')).toBe(false);
    expect(githubSignatureMatches(githubSignature('s3cret', body), Buffer.from('{"a":2}'), 's3cret')).toBe(false);
    expect(githubSignatureMatches('sha256=zz', body, 's3cret')).toBe(false);
    expect(githubSignatureMatches(undefined, body, 's3cret')).toBe(false);
    expect(gitlabTokenMatches('tok', 'tok')).toBe(true);
    expect(gitlabTokenMatches('tok2', 'tok')).toBe(false);
  });

  it('reads pushes, branch deletions and merge requests from both forges', () => {
    expect(githubEvent('push', { ref: 'refs/tags/v1', after: 'a', repository: { clone_url: 'https://x/y.git' } })).toMatchObject({
      kind: 'push',
      branch: null,
    });
    expect(githubEvent('push', { ref: 'refs/heads/f', after: '0'.repeat(40), deleted: true, repository: {} })).toMatchObject({
      deleted: true,
      commitSha: null,
    });
    expect(githubEvent('ping', { zen: 'x', repository: { clone_url: 'https://x/y.git' } })).toEqual({
      kind: 'other',
      repoUrls: ['https://x/y.git'],
      eventType: 'ping',
    });
    expect(
      gitlabEvent('Push Hook', {
        ref: 'refs/heads/main',
        after: 'c'.repeat(40),
        checkout_sha: 'c'.repeat(40),
        commits: [{ id: 'c'.repeat(40), message: 'm' }],
        project: { default_branch: 'main' },
      }),
    ).toMatchObject({
      branch: 'main',
      commitMessage: 'm',
      repoDefaultBranch: 'main',
    });
    expect(
      gitlabEvent('Merge Request Hook', {
        object_attributes: { iid: 2, action: 'merge', source_branch: 'f', last_commit: { id: 'd'.repeat(40) } },
      }),
    ).toMatchObject({ kind: 'merge_request', action: 'closed', number: 2 });
  });
});

describe('failure signatures and presets', () => {
  it('normalise numbers, paths and hashes, so a failure repeated is one signature', () => {
    const a = failureSignature('Build failed: `npm run build` exited with code 2: Error in /tmp/x123/src/a.js:12 (4f3a9c2e1b)');
    const b = failureSignature('Build failed: `npm run build` exited with code 2: Error in /tmp/y987/src/a.js:40 (9c2e1b4f3a)');
    expect(a).toBe(b);
    expect(failureSignature('Build failed: a different error')).not.toBe(a);
  });

  it('have one preset for each of the nine frameworks; project settings win', () => {
    expect(Object.keys(FRAMEWORK_PRESETS).sort()).toEqual([...FRAMEWORKS].sort());
    expect(buildSettings({ framework: 'astro' })).toEqual({ buildCommand: '{pm} run build', outputDir: 'dist' });
    expect(buildSettings({ framework: 'hugo', build_command: 'hugo --minify', output_dir: ' ' })).toEqual({
      buildCommand: 'hugo --minify',
      outputDir: 'public',
    });
  });
});
