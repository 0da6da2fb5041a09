import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeam } from '../../lib/teams/teams.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { sha256, site, uniqueName, uniqueSite } from '../support/uploads.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
  // Room for the projects these tests create (the free plan allows 5).
  const { setTeamPlan } = await import('../../lib/teams/standing.ts');
  await setTeamPlan(m.team.id, 'team');
});
afterAll(() => platform?.stop());

const beginUpload = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
  platform.api('POST', '/api/v1/uploads', { token, body, headers });

async function projectCount(token = m.owner.token): Promise<number> {
  const reply = await platform.api('GET', '/api/v1/projects?limit=100', { token });
  expect(reply.status).toBe(200);
  return reply.body.data.projects.length;
}

const PROJECT_FIELDS = [
  'id',
  'team_id',
  'name',
  'slug',
  'subdomain',
  'production_url',
  'status',
  'framework',
  'build_command',
  'output_dir',
  'root_directory',
  'package_manager',
  'default_branch',
  'repo_default_branch',
  'git_provider',
  'git_repo_url',
  'git_connection_id',
  'git_auth_mode',
  'forge_audience',
  'auto_deploy_enabled',
  'auto_deploy_paused_at',
  'auto_deploy_pause_reason',
  'consecutive_build_failures',
  'last_build_failure_message',
  'mr_previews_enabled',
  'preview_branch_mode',
  'preview_branch_include',
  'preview_branch_exclude',
  'preview_slug',
  'primary_domain_id',
  'platform_url_mode',
  'production_branch_deleted_at',
  'live_deployment_id',
  'cdn_pull_zone_id',
  'cdn_edge_rule_guid',
  'cdn_not_found_edge_rule_guid',
  'analytics_enabled',
  'provisional_until',
  'created_via',
  'created_client',
  'created_at',
  'updated_at',
];

describe('POST /api/v1/uploads: the 201 answer', { timeout: 120_000 }, () => {
  it('carries every field of the upload session and a project with every field of the Project table', async () => {
    const s = site({ 'index.html': `<p>${uniqueName()}</p>`, 'copy/index.html': 'same', 'copy2/index.html': 'same' });
    const before = Date.now();
    const reply = await beginUpload(
      m.member.token,
      { files: s.files, label: 'first', project: { name: 'Rocket Site', subdomain: `rocket-${Date.now()}` } },
      { 'x-platform-client': 'cli' },
    );
    expect(reply.status).toBe(201);
    const data = reply.body.data;
    expect(Object.keys(data).sort()).toEqual(
      ['upload_id', 'deployment_id', 'project_id', 'project', 'expires_at', 'known_count', 'missing', 'total_bytes_to_send'].sort(),
    );
    const hashes = [...new Set(s.files.map((f) => f.hash))].sort();
    expect(data.missing).toEqual(hashes);
    expect(data.known_count).toBe(0);
    expect(data.total_bytes_to_send).toBe(s.files[0]!.size + 4); // "same" counted once
    expect(data.upload_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(data.expires_at)).toBeGreaterThan(before);
    const p = data.project;
    expect(Object.keys(p).sort()).toEqual([...PROJECT_FIELDS].sort());
    expect(p).toMatchObject({
      id: data.project_id,
      team_id: m.team.id,
      name: 'Rocket Site',
      status: 'active',
      framework: 'other',
      build_command: null,
      output_dir: null,
      package_manager: null,
      default_branch: null,
      git_auth_mode: null,
      auto_deploy_enabled: false,
      auto_deploy_paused_at: null,
      auto_deploy_pause_reason: null,
      consecutive_build_failures: 0,
      last_build_failure_message: null,
      mr_previews_enabled: true,
      preview_branch_mode: 'all',
      preview_branch_include: [],
      preview_branch_exclude: [],
      preview_slug: null,
      primary_domain_id: null,
      platform_url_mode: 'serve',
      live_deployment_id: null,
      cdn_pull_zone_id: null,
      analytics_enabled: true,
      created_via: 'session',
      created_client: 'cli',
    });
    expect(p.slug).toBe(p.subdomain);
    expect(p.production_url).toBe(`http://${p.subdomain}.localhost:${platform.port}`);
    // About 2 h 15 min after this begin.
    const until = Date.parse(p.provisional_until);
    expect(until - Date.parse(p.created_at)).toBeGreaterThanOrEqual(8100 * 1000 - 1000);
    expect(until - Date.parse(p.created_at)).toBeLessThanOrEqual(8100 * 1000 + 1000);
  });

  it('records api_key provenance, and ignores an unknown X-Platform-Client', async () => {
    const reply = await beginUpload(
      m.apiKey.token,
      { files: uniqueSite().files, project: { name: uniqueName() } },
      { 'x-platform-client': 'curl' },
    );
    expect(reply.status).toBe(201);
    expect(reply.body.data.project.created_via).toBe('api_key');
    expect(reply.body.data.project.created_client).toBeNull();
  });

  it('derives the subdomain from the name, and picks a free one when it is held', async () => {
    const name = `Derived ${Date.now()}`;
    const first = await beginUpload(m.member.token, { files: uniqueSite().files, project: { name } });
    expect(first.body.data.project.subdomain).toBe(name.toLowerCase().replace(' ', '-'));
    const other = await createTeam({ name: 'Elsewhere', ownerUserId: m.outsider.user.user_id });
    expect(other.id).toBeTruthy();
    const second = await beginUpload(m.outsider.token, { files: uniqueSite().files, project: { name } }, { 'x-team-id': other.id });
    expect(second.status).toBe(201);
    expect(second.body.data.project.subdomain).toMatch(new RegExp(`^${first.body.data.project.subdomain}-[0-9a-f]{4}$`));
  });

  it('narrows missing to the blobs the team does not hold', async () => {
    const s = uniqueSite();
    const first = await beginUpload(m.member.token, { files: s.files, project: { name: uniqueName() } });
    for (const hash of first.body.data.missing) {
      const put = await platform.api('PUT', `/api/v1/uploads/${first.body.data.upload_id}/files/${hash}`, {
        token: m.member.token,
        rawBody: s.bytes.get(hash)!,
      });
      expect(put.status).toBe(200);
    }
    const changed = Buffer.from(`<h1>changed ${Date.now()}</h1>`);
    const files = [...s.files.filter((f) => f.path !== 'index.html'), { path: 'index.html', hash: sha256(changed), size: changed.length }];
    const second = await beginUpload(m.member.token, { files, project: { name: uniqueName() } });
    expect(second.status).toBe(201);
    expect(second.body.data.missing).toEqual([sha256(changed)]);
    expect(second.body.data.known_count).toBe(1);
    expect(second.body.data.total_bytes_to_send).toBe(changed.length);
    // Another team holds none of them.
    const other = await beginUpload(m.outsider.token, { files, project: { name: uniqueName() } });
    expect(other.body.data.missing).toHaveLength(2);
  });
});

describe('POST /api/v1/uploads: authorization matrix', { timeout: 120_000 }, () => {
  it('401 without a token or with an unknown one', async () => {
    expectError(await beginUpload(undefined, { files: uniqueSite().files, project: { name: 'x' } }), 401, 'UNAUTHENTICATED');
    expectError(
      await beginUpload(`slw_s_${'A'.repeat(43)}`, { files: uniqueSite().files, project: { name: 'x' } }),
      401,
      'UNAUTHENTICATED',
    );
  });

  it.each(['owner', 'admin', 'member', 'apiKey'] as const)('201 for the %s, in the current team', async (who) => {
    const reply = await beginUpload(m[who].token, { files: uniqueSite().files, project: { name: uniqueName(who) } });
    expect(reply.status).toBe(201);
    expect(reply.body.data.project.team_id).toBe(m.team.id);
  });

  it('a member of another team cannot create in this team (403); a platform admin who is no member neither', async () => {
    const body = { files: uniqueSite().files, project: { name: uniqueName() } };
    expectError(await beginUpload(m.outsider.token, body, { 'x-team-id': m.team.id }), 403, 'FORBIDDEN');
    expectError(await beginUpload(m.platformAdmin.token, body, { 'x-team-id': m.team.id }), 403, 'FORBIDDEN');
    expectError(await beginUpload(m.platformAdmin.token, body), 400, 'NO_CURRENT_TEAM');
    expectError(await beginUpload(m.apiKey.token, body, { 'x-team-id': m.otherTeam.id }), 403, 'FORBIDDEN');
  });
});

describe('POST /api/v1/uploads: manifest checks, before anything is created', { timeout: 120_000 }, () => {
  const h = 'a'.repeat(64);
  const cases: [string, unknown, string | null][] = [
    ['files missing', undefined, null],
    ['an empty list', [], null],
    ['an absolute path', [{ path: '/index.html', hash: h, size: 1 }], '/index.html'],
    [
      'a ".." segment',
      [
        { path: 'index.html', hash: h, size: 1 },
        { path: 'a/../b.html', hash: h, size: 1 },
      ],
      'a/../b.html',
    ],
    [
      'a backslash',
      [
        { path: 'index.html', hash: h, size: 1 },
        { path: 'a\\b.html', hash: h, size: 1 },
      ],
      'a\\b.html',
    ],
    [
      'a control character',
      [
        { path: 'index.html', hash: h, size: 1 },
        { path: 'a\u0007.html', hash: h, size: 1 },
      ],
      'a\u0007.html',
    ],
    [
      'an empty segment',
      [
        { path: 'index.html', hash: h, size: 1 },
        { path: 'a//b.html', hash: h, size: 1 },
      ],
      'a//b.html',
    ],
    [
      'a duplicate path',
      [
        { path: 'index.html', hash: h, size: 1 },
        { path: 'index.html', hash: h, size: 1 },
      ],
      'index.html',
    ],
    ['an uppercase hash', [{ path: 'index.html', hash: 'A'.repeat(64), size: 1 }], 'index.html'],
    ['a short hash', [{ path: 'index.html', hash: 'abc', size: 1 }], 'index.html'],
    ['a negative size', [{ path: 'index.html', hash: h, size: -1 }], 'index.html'],
    ['a fractional size', [{ path: 'index.html', hash: h, size: 1.5 }], 'index.html'],
    ['a file over 10 MiB', [{ path: 'index.html', hash: h, size: 10 * 1024 * 1024 + 1 }], 'index.html'],
    ['an entry that is not an object', ['index.html'], null],
  ];
  it.each(cases)('INVALID_MANIFEST for %s, naming the offending path', async (_label, files, path) => {
    const before = await projectCount();
    const reply = await beginUpload(m.member.token, { files, project: { name: uniqueName() } });
    expectError(reply, 400, 'INVALID_MANIFEST');
    expect(reply.body.details.problems.length).toBeGreaterThan(0);
    if (path !== null) expect(reply.body.details.problems.map((p: any) => p.path)).toContain(path);
    expect(await projectCount()).toBe(before);
  });

  it('INVALID_MANIFEST over the plan file-count limit', async () => {
    const { setTeamPlan } = await import('../../lib/teams/standing.ts');
    const team = await createTeam({ name: 'Counting', ownerUserId: m.outsider.user.user_id });
    await setTeamPlan(team.id, 'free');
    const files = Array.from({ length: 10_001 }, (_, i) => ({ path: i === 0 ? 'index.html' : `f/${i}.txt`, hash: h, size: 1 }));
    const reply = await beginUpload(m.outsider.token, { files, project: { name: 'many' } }, { 'x-team-id': team.id });
    expectError(reply, 400, 'INVALID_MANIFEST');
    expect(reply.body.details).toMatchObject({ max_files: 10_000, file_count: 10_001, plan: 'free' });
  });

  it('UPLOAD_SITE_IN_SUBFOLDER when index.html sits in one top folder', async () => {
    const s = site({ 'dist/index.html': 'x', 'dist/app.js': 'y' });
    const reply = await beginUpload(m.member.token, { files: s.files, project: { name: uniqueName() } });
    expectError(reply, 422, 'UPLOAD_SITE_IN_SUBFOLDER');
    expect(reply.body.details).toEqual({ folder: 'dist', index_path: 'dist/index.html' });
  });

  it('UPLOAD_SOURCE_CODE for a source tree without a built index.html', async () => {
    const s = site({ 'package.json': '{}', 'src/main.ts': 'x', 'README.md': 'r' });
    const reply = await beginUpload(m.member.token, { files: s.files, project: { name: uniqueName() } });
    expectError(reply, 422, 'UPLOAD_SOURCE_CODE');
    expect(reply.body.details.markers).toEqual(['package.json', 'src/']);
  });

  it('UPLOAD_SOURCE_CODE for an unbuilt Vite project (its root index.html is the source one)', async () => {
    const s = site({ 'index.html': '<script src="/src/main.ts">', 'vite.config.ts': 'x', 'package.json': '{}', 'src/main.ts': 'x' });
    expectError(await beginUpload(m.member.token, { files: s.files, project: { name: uniqueName() } }), 422, 'UPLOAD_SOURCE_CODE');
  });

  it('UPLOAD_PHP_SITE for PHP entry files', async () => {
    const s = site({ 'index.php': '<?php echo 1;', 'style.css': 'x' });
    const reply = await beginUpload(m.member.token, { files: s.files, project: { name: uniqueName() } });
    expectError(reply, 422, 'UPLOAD_PHP_SITE');
    expect(reply.body.details).toEqual({ php_files: ['index.php'] });
  });

  it('a plain site with a stray package.json but no sources is fine', async () => {
    const s = uniqueSite({ 'package.json': '{}' });
    expect((await beginUpload(m.member.token, { files: s.files, project: { name: uniqueName() } })).status).toBe(201);
  });
});

describe('POST /api/v1/uploads: name and subdomain', { timeout: 120_000 }, () => {
  it('a name is 1 to 255 characters', async () => {
    expectError(await beginUpload(m.member.token, { files: good(), project: { name: '' } }), 400, 'VALIDATION_FAILED');
    expectError(await beginUpload(m.member.token, { files: good(), project: { name: 'n'.repeat(256) } }), 400, 'VALIDATION_FAILED');
    expectError(await beginUpload(m.member.token, { files: good() }), 400, 'VALIDATION_FAILED');
    const longest = `${'n'.repeat(247)}${Date.now().toString(36)}`.slice(0, 255);
    const ok = await beginUpload(m.member.token, { files: good(), project: { name: longest } });
    expect(ok.status).toBe(201);
    expect(ok.body.data.project.name).toBe(longest);
    expect(ok.body.data.project.subdomain.length).toBeLessThanOrEqual(63);
  });

  it('PROJECT_NAME_TAKEN within the team (any case); another team may use the name', async () => {
    const name = uniqueName('Taken');
    expect((await beginUpload(m.member.token, { files: good(), project: { name } })).status).toBe(201);
    const again = await beginUpload(m.member.token, { files: good(), project: { name: name.toUpperCase() } });
    expectError(again, 409, 'PROJECT_NAME_TAKEN');
    expect((await beginUpload(m.outsider.token, { files: good(), project: { name } })).status).toBe(201);
  });

  async function expectFreeSuggestions(reply: { body: any }) {
    const suggestions: string[] = reply.body.details.suggestions;
    expect(suggestions.length).toBeGreaterThan(0);
    for (const s of suggestions) expect(s).toMatch(/^[a-z0-9](?:[a-z0-9-]{1,61})[a-z0-9]$/);
    // The first suggestion is really free: taking it works.
    const taken = await beginUpload(m.member.token, { files: good(), project: { name: uniqueName(), subdomain: suggestions[0] } });
    expect(taken.status).toBe(201);
    expect(taken.body.data.project.subdomain).toBe(suggestions[0]);
  }

  it('SUBDOMAIN_INVALID with free suggestions', async () => {
    for (const bad of ['a', 'Under_score!', '-lead', 'trail-', 'dou--ble', 'x'.repeat(64)]) {
      const reply = await beginUpload(m.member.token, { files: good(), project: { name: uniqueName(), subdomain: bad } });
      expectError(reply, 400, 'SUBDOMAIN_INVALID');
      expect(reply.body.details.subdomain).toBe(bad);
    }
    await expectFreeSuggestions(await beginUpload(m.member.token, { files: good(), project: { name: 'Shop', subdomain: 'my_shop' } }));
  });

  it('SUBDOMAIN_RESERVED with free suggestions', async () => {
    const reply = await beginUpload(m.member.token, { files: good(), project: { name: uniqueName(), subdomain: 'www' } });
    expectError(reply, 400, 'SUBDOMAIN_RESERVED');
    expect(reply.body.details.suggestions).not.toContain('www');
    await expectFreeSuggestions(reply);
  });

  it('SUBDOMAIN_TAKEN with free suggestions', async () => {
    const subdomain = `taken-${Date.now()}`;
    expect((await beginUpload(m.member.token, { files: good(), project: { name: uniqueName(), subdomain } })).status).toBe(201);
    const reply = await beginUpload(m.outsider.token, { files: good(), project: { name: uniqueName(), subdomain } });
    expectError(reply, 409, 'SUBDOMAIN_TAKEN');
    expect(reply.body.details.subdomain).toBe(subdomain);
    expect(reply.body.details.suggestions).not.toContain(subdomain);
    await expectFreeSuggestions(reply);
  });

  it('two racing requests for one subdomain: one 201, the others SUBDOMAIN_TAKEN', async () => {
    const subdomain = `race-${Date.now()}`;
    const replies = await Promise.all(
      [m.member, m.admin, m.owner, m.outsider].map((who) =>
        beginUpload(who.token, { files: good(), project: { name: uniqueName(), subdomain } }),
      ),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectError(r, 409, 'SUBDOMAIN_TAKEN');
  });

  it('two racing requests for one name in a team: one 201, the other PROJECT_NAME_TAKEN', async () => {
    const name = uniqueName('Racing');
    const replies = await Promise.all(
      [m.member, m.admin, m.owner].map((who) => beginUpload(who.token, { files: good(), project: { name } })),
    );
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 201)) expectError(r, 409, 'PROJECT_NAME_TAKEN');
  });
});

function good() {
  return uniqueSite().files;
}
