import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { decryptEnvValue } from '../../lib/env/encryption.ts';
import { logger } from '../../lib/logger.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { expectEnvelopeError as expectError } from '../support/envelope.ts';

let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

/** A Project item as the Sites data contract stores it (the project endpoints are another part's). */
async function makeProject(teamId: string): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await dynamo().send(
    new PutCommand({
      TableName: config.tableName(),
      Item: {
        pk: `PROJECT#${id}`,
        sk: 'PROJECT',
        gsi1pk: `TEAMPROJECTS#${teamId}`,
        gsi1sk: `${now}#${id}`,
        id,
        team_id: teamId,
        name: `Site ${id.slice(0, 8)}`,
        slug: `site-${id.slice(0, 8)}`,
        subdomain: `site-${id.slice(0, 8)}`,
        created_at: now,
      },
    }),
  );
  return id;
}

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles('Env Importers');
});
afterAll(() => platform?.stop());

const bulk = (projectId: string, body: unknown, token = m.admin.token) =>
  platform.api('POST', `/api/v1/projects/${projectId}/env/bulk`, { token, body });
const setOne = (projectId: string, name: string, body: unknown, token = m.admin.token) =>
  platform.api('PUT', `/api/v1/projects/${projectId}/env/${encodeURIComponent(name)}`, { token, body });
const list = (projectId: string, token = m.admin.token, query = '') =>
  platform.api('GET', `/api/v1/projects/${projectId}/env${query}`, { token });

const SECRETS = ['pg-s3cret-pw', 'sk_live_Zz9Yy8Xx7', 'line-two-of-the-key', 'quoted hash # kept'];
const CONTENT = [
  '# production settings',
  'export DATABASE_URL=postgres://app:pg-s3cret-pw@db/app',
  'STRIPE_KEY="sk_live_Zz9Yy8Xx7"',
  'PRIVATE_KEY="-----BEGIN KEY-----',
  'line-two-of-the-key',
  '-----END KEY-----"',
  "GREETING='quoted hash # kept'",
  'AWS_ACCESS_KEY_ID=AKIAEXAMPLE',
  'bad-name=1',
  'this line has no equals sign',
  '',
].join('\n');

describe('POST /api/v1/projects/{id}/env/bulk', () => {
  it('imports quotes, multi-line values, comments and export prefixes; reports created, updated and rejected; stores values sealed', async () => {
    const projectId = await makeProject(m.team.id);
    const reply = await bulk(projectId, { content: CONTENT, environment: 'production' });
    expect(reply.status).toBe(200);
    expect(reply.body.data).toEqual({
      environment: 'production',
      targets: ['build'],
      created: ['DATABASE_URL', 'STRIPE_KEY', 'PRIVATE_KEY', 'GREETING'],
      updated: [],
      rejected: [
        { line: 10, reason: 'not_a_variable_line', message: 'This line is not NAME=value, a comment or blank.' },
        { name: 'AWS_ACCESS_KEY_ID', reason: 'reserved_name', message: 'This name is reserved by the platform.' },
        {
          name: 'bad-name',
          reason: 'invalid_name',
          message: 'Names are letters, digits and underscores, not starting with a digit, at most 256 characters.',
        },
      ],
    });
    for (const secret of [...SECRETS, 'AKIAEXAMPLE']) expect(reply.text).not.toContain(secret);

    // At rest: AES-256-GCM sealed, bound to project, environment and name.
    const stored = await dynamo().send(
      new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, 'production', 'PRIVATE_KEY') }),
    );
    const item = stored.Item!;
    expect(JSON.stringify(item)).not.toContain('line-two-of-the-key');
    expect(item.value_sealed).toMatch(/^v1\./);
    expect(decryptEnvValue(item.value_sealed, { projectId, environment: 'production', name: 'PRIVATE_KEY' })).toBe(
      '-----BEGIN KEY-----\nline-two-of-the-key\n-----END KEY-----',
    );
    expect(item).toMatchObject({
      name: 'PRIVATE_KEY',
      environment: 'production',
      targets: ['build'],
      team_id: m.team.id,
      project_id: projectId,
    });
    const db = await dynamo().send(
      new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, 'production', 'DATABASE_URL') }),
    );
    expect(decryptEnvValue(db.Item!.value_sealed, { projectId, environment: 'production', name: 'DATABASE_URL' })).toBe(
      'postgres://app:pg-s3cret-pw@db/app',
    );

    // A second import of an overlapping file: existing names are updated, new ones created.
    const again = await bulk(projectId, { content: 'STRIPE_KEY=sk_live_new\nNEW_ONE=1\n', environment: 'production', targets: ['build'] });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({
      environment: 'production',
      targets: ['build'],
      created: ['NEW_ONE'],
      updated: ['STRIPE_KEY'],
      rejected: [],
    });
    const rotated = await dynamo().send(
      new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, 'production', 'STRIPE_KEY') }),
    );
    expect(decryptEnvValue(rotated.Item!.value_sealed, { projectId, environment: 'production', name: 'STRIPE_KEY' })).toBe('sk_live_new');

    // Environments are separate: the same name in preview is a new variable.
    const preview = await bulk(projectId, { content: 'STRIPE_KEY=sk_test_1', environment: 'preview' });
    expect(preview.body.data.created).toEqual(['STRIPE_KEY']);
  });

  it('the list endpoint returns names and metadata only, never values', async () => {
    const projectId = await makeProject(m.team.id);
    await bulk(projectId, { content: CONTENT, environment: 'production' });
    await bulk(projectId, { content: 'STRIPE_KEY=sk_test_only', environment: 'development' });
    for (const who of ['owner', 'admin', 'member', 'apiKey'] as const) {
      const reply = await list(projectId, m[who].token);
      expect(reply.status).toBe(200);
      for (const secret of [...SECRETS, 'sk_test_only']) expect(reply.text).not.toContain(secret);
      expect(reply.text).not.toContain('value');
      const variables = reply.body.data.variables as Record<string, unknown>[];
      expect(variables.map((v) => `${v.environment}/${v.name}`).sort()).toEqual([
        'development/STRIPE_KEY',
        'production/DATABASE_URL',
        'production/GREETING',
        'production/PRIVATE_KEY',
        'production/STRIPE_KEY',
      ]);
      for (const v of variables) {
        expect(Object.keys(v).sort()).toEqual(['created_at', 'environment', 'name', 'targets', 'updated_at']);
        expect(v.targets).toEqual(['build']);
      }
    }
    const onlyDev = await list(projectId, m.admin.token, '?environment=development');
    expect(onlyDev.body.data.variables.map((v: { name: string }) => v.name)).toEqual(['STRIPE_KEY']);
    expectError(await list(projectId, m.admin.token, '?environment=staging'), 400, 'VALIDATION_FAILED');
  });

  it('values never reach the logs', async () => {
    const projectId = await makeProject(m.team.id);
    const captured: string[] = [];
    const stdout = process.stdout.write.bind(process.stdout);
    const stderr = process.stderr.write.bind(process.stderr);
    const capture = (chunk: unknown) => {
      captured.push(String(chunk));
      return true;
    };
    logger.setLogLevel('DEBUG');
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    try {
      expect((await bulk(projectId, { content: CONTENT, environment: 'production' })).status).toBe(200);
      expect((await setOne(projectId, 'SINGLE_SECRET', { value: 'single-s3cret-value', environment: 'production' })).status).toBe(201);
      expect((await bulk(projectId, { content: '# nothing', environment: 'production' })).status).toBe(422);
    } finally {
      process.stdout.write = stdout;
      process.stderr.write = stderr;
      logger.setLogLevel('CRITICAL');
    }
    const logs = captured.join('');
    // The capture works: the import's own log line is there, with counts only.
    expect(logs).toContain('environment variables imported');
    for (const secret of [...SECRETS, 'single-s3cret-value', 'AKIAEXAMPLE']) expect(logs).not.toContain(secret);
  });

  it('422 ENV_IMPORT_EMPTY for content with no valid line, changing nothing', async () => {
    const projectId = await makeProject(m.team.id);
    for (const content of ['', '# only a comment\n\n', 'bad-name=1\nAWS_REGION=eu-west-1\njust words']) {
      const reply = await bulk(projectId, { content, environment: 'production' });
      expectError(reply, 422, 'ENV_IMPORT_EMPTY');
      expect(reply.body.error).toBe('The content has no valid NAME=value line.');
    }
    const withRejections = await bulk(projectId, { content: 'bad-name=hunter2', environment: 'production' });
    expect(withRejections.body.details.rejected).toEqual([{ name: 'bad-name', reason: 'invalid_name', message: expect.any(String) }]);
    expect(withRejections.text).not.toContain('hunter2');
    expect((await list(projectId)).body.data.variables).toEqual([]);
  });

  it('400 VALIDATION_FAILED for a missing content or environment, an unknown environment or target', async () => {
    const projectId = await makeProject(m.team.id);
    for (const body of [
      { environment: 'production' },
      { content: 'A=1' },
      { content: 'A=1', environment: 'staging' },
      { content: 'A=1', environment: 'production', targets: ['runtime'] },
      { content: 'A=1', environment: 'production', targets: [] },
      { content: 'A=1', environment: 'production', targets: ['build', 'build'] },
      { content: 42, environment: 'production' },
    ]) {
      expectError(await bulk(projectId, body), 400, 'VALIDATION_FAILED');
    }
    expect((await list(projectId)).body.data.variables).toEqual([]);
  });

  it('400 ENV_IMPORT_TOO_MANY over 500 variables', async () => {
    const projectId = await makeProject(m.team.id);
    const content = Array.from({ length: 501 }, (_, i) => `VAR_${i}=${i}`).join('\n');
    expectError(await bulk(projectId, { content, environment: 'development' }), 400, 'ENV_IMPORT_TOO_MANY');
    expect((await list(projectId)).body.data.variables).toEqual([]);
  });

  it('racing imports of the same new variable: exactly one reports it created', async () => {
    const projectId = await makeProject(m.team.id);
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => bulk(projectId, { content: `RACE_TOKEN=value-${i}\nSHARED=x`, environment: 'production' })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(replies.filter((r) => r.body.data.created.includes('RACE_TOKEN'))).toHaveLength(1);
    expect(replies.filter((r) => r.body.data.updated.includes('RACE_TOKEN'))).toHaveLength(7);
    expect(replies.filter((r) => r.body.data.created.includes('SHARED'))).toHaveLength(1);
    expect((await list(projectId)).body.data.variables).toHaveLength(2);
  });
});

describe('PUT /api/v1/projects/{id}/env/{name}', () => {
  it('201 on create, 200 on update, with the same default targets as the bulk import; the value is never echoed', async () => {
    const projectId = await makeProject(m.team.id);
    const created = await setOne(projectId, 'API_TOKEN', { value: 'tok-123-secret', environment: 'preview' });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      name: 'API_TOKEN',
      environment: 'preview',
      targets: ['build'],
      created: true,
      created_at: expect.any(String),
      updated_at: created.body.data.created_at,
    });
    expect(created.text).not.toContain('tok-123-secret');
    const updated = await setOne(projectId, 'API_TOKEN', { value: 'tok-456-secret', environment: 'preview', targets: ['build'] });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'API_TOKEN', created: false, created_at: created.body.data.created_at });
    expect(updated.text).not.toContain('tok-456-secret');
    const bulkReply = await bulk(projectId, { content: 'API_TOKEN=tok-789', environment: 'preview' });
    expect(bulkReply.body.data.updated).toEqual(['API_TOKEN']);
  });

  it('400 for an invalid or reserved name, a too large value, a bad environment', async () => {
    const projectId = await makeProject(m.team.id);
    expectError(await setOne(projectId, 'bad-name', { value: 'x', environment: 'production' }), 400, 'ENV_NAME_INVALID');
    expectError(await setOne(projectId, '9LIVES', { value: 'x', environment: 'production' }), 400, 'ENV_NAME_INVALID');
    expectError(await setOne(projectId, 'AWS_REGION', { value: 'x', environment: 'production' }), 400, 'ENV_NAME_RESERVED');
    expectError(
      await setOne(projectId, 'BIG', { value: 'x'.repeat(64 * 1024 + 1), environment: 'production' }),
      400,
      'ENV_VALUE_TOO_LARGE',
    );
    expectError(await setOne(projectId, 'OK', { value: 'x', environment: 'prod' }), 400, 'VALIDATION_FAILED');
    expectError(await setOne(projectId, 'OK', { environment: 'production' }), 400, 'VALIDATION_FAILED');
    expect((await list(projectId)).body.data.variables).toEqual([]);
  });

  it('racing sets of the same new name: exactly one 201', async () => {
    const projectId = await makeProject(m.team.id);
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => setOne(projectId, 'RACED', { value: `v${i}`, environment: 'production' })),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
  });
});

describe('environment variable endpoints: authorization matrix', () => {
  let projectId: string;
  beforeAll(async () => {
    projectId = await makeProject(m.team.id);
  });
  const calls = () => ({
    bulk: (token?: string) =>
      platform.api('POST', `/api/v1/projects/${projectId}/env/bulk`, { token, body: { content: 'MATRIX=1', environment: 'production' } }),
    put: (token?: string) =>
      platform.api('PUT', `/api/v1/projects/${projectId}/env/MATRIX`, { token, body: { value: '1', environment: 'production' } }),
    list: (token?: string) => platform.api('GET', `/api/v1/projects/${projectId}/env`, { token }),
  });

  it('401 without a token or with an unknown one', async () => {
    for (const call of Object.values(calls())) {
      expectError(await call(), 401, 'UNAUTHENTICATED');
      expectError(await call(`slw_s_${'Q'.repeat(43)}`), 401, 'UNAUTHENTICATED');
    }
  });

  it.each(['owner', 'admin', 'apiKey'] as const)('the %s may import, set and list', async (who) => {
    const c = calls();
    expect((await c.bulk(m[who].token)).status).toBe(200);
    expect((await c.put(m[who].token)).status).toBe(200);
    expect((await c.list(m[who].token)).status).toBe(200);
  });

  it('a member may list names but not import or set', async () => {
    const c = calls();
    expectError(await c.bulk(m.member.token), 403, 'FORBIDDEN');
    expectError(await c.put(m.member.token), 403, 'FORBIDDEN');
    expect((await c.list(m.member.token)).status).toBe(200);
  });

  // As every project endpoint: a project of a team the caller is not in answers as if it did not exist.
  it.each(['outsider', 'platformAdmin'] as const)('404 PROJECT_NOT_FOUND for the %s (a project of a team they are not in)', async (who) => {
    for (const call of Object.values(calls())) expectError(await call(m[who].token), 404, 'PROJECT_NOT_FOUND');
  });

  it("404 PROJECT_NOT_FOUND for another team's API key", async () => {
    const other = await makeTeamWithRoles('Other Env Team');
    for (const call of Object.values(calls())) expectError(await call(other.apiKey.token), 404, 'PROJECT_NOT_FOUND');
  });

  it.each([randomUUID(), 'not-a-project-id'])('404 PROJECT_NOT_FOUND for a project that does not exist (%s)', async (missing) => {
    const replies = [
      await bulk(missing, { content: 'A=1', environment: 'production' }, m.owner.token),
      await setOne(missing, 'A', { value: '1', environment: 'production' }, m.owner.token),
      await list(missing, m.owner.token),
    ];
    for (const reply of replies) {
      expectError(reply, 404, 'PROJECT_NOT_FOUND');
      expect(reply.body.error).toBe('Project not found.');
    }
  });
});
