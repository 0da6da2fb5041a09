import { CreateSecretCommand, GetRandomPasswordCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '../../lib/aws/clients.ts';
import { loadSecrets, refreshSecret, secretsManager } from '../../lib/aws/secrets.ts';
import { config, PlatformEnv } from '../../lib/config.ts';
import { keys } from '../../lib/db/keys.ts';
import { decryptEnvValue, parseEnvEncryptionKey } from '../../lib/env/encryption.ts';
import { verifyConnectState } from '../../lib/git/connect-state.ts';
import { secretDefinitions } from '../../lib/resources.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { putProjectFixture } from '../support/sites.ts';

/**
 * The cloud path of secrets against moto's Secrets Manager: the stack gives a
 * function only the secret's ARN and the handler fetches the value on cold start.
 */
let platform: TestPlatform;
const { gitState, envEncryption, forgeSigning } = secretDefinitions;
const touched = [
  gitState.envVar,
  gitState.arnEnvVar,
  envEncryption.envVar,
  envEncryption.arnEnvVar,
  forgeSigning.envVar,
  forgeSigning.arnEnvVar,
];
let saved: Record<string, string | undefined>;

beforeAll(async () => {
  platform = await startTestPlatform();
  saved = Object.fromEntries(touched.map((name) => [name, platform.env[name]]));
});
afterAll(() => platform?.stop());

/** The platform's own configuration (lib/config.ts) as it was started. */
function restoreEnvironment() {
  for (const name of touched) {
    if (saved[name] === undefined) delete platform.env[name];
    else platform.env[name] = saved[name];
  }
}

async function createSecret(value: string): Promise<string> {
  const created = await secretsManager().send(
    new CreateSecretCommand({ Name: `slipway-test-${randomBytes(6).toString('hex')}`, SecretString: value }),
  );
  return created.ARN!;
}

/** An ARN of the right shape that names no secret: fetching it fails. */
const nowhere = () => `arn:aws:secretsmanager:us-east-1:123456789012:secret:slipway-absent-${randomBytes(6).toString('hex')}-AbCdEf`;

/** A Lambda's configuration at cold start: what the stack gives it (here the secrets' ARNs), on the run's AWS endpoint. */
const lambdaEnv = (given: Record<string, string>) => new PlatformEnv({ AWS_ENDPOINT_URL: platform.awsEndpoint, ...given });

describe('loadSecrets', () => {
  it('reads a fetched secret again once it is older than asked (a rotation of the forge signing key), never a given one', async () => {
    const arn = await createSecret('seed-one-'.padEnd(40, 'x'));
    const lambda = lambdaEnv({ [forgeSigning.arnEnvVar]: arn });
    const held = () => lambda.run(() => config.secretValue('forgeSigning'));
    await lambda.run(() => loadSecrets(['forgeSigning']));
    expect(held()).toBe('seed-one-'.padEnd(40, 'x'));
    await secretsManager().send(new PutSecretValueCommand({ SecretId: arn, SecretString: 'seed-two-'.padEnd(40, 'x') }));
    // Younger than the limit: the value held stays.
    await lambda.run(() => refreshSecret('forgeSigning', 60_000));
    expect(held()).toBe('seed-one-'.padEnd(40, 'x'));
    await lambda.run(() => refreshSecret('forgeSigning', 0));
    expect(held()).toBe('seed-two-'.padEnd(40, 'x'));
    // A read that fails keeps the value held.
    lambda.owned[forgeSigning.arnEnvVar] = nowhere();
    await expect(lambda.run(() => refreshSecret('forgeSigning', 0))).resolves.toBeUndefined();
    expect(held()).toBe('seed-two-'.padEnd(40, 'x'));
    // Fetched into that configuration only: the platform's own value is untouched.
    expect(config.secretValue('forgeSigning')).toBe(saved[forgeSigning.envVar]);
  });

  it('fetches a secret whose value is unset from the ARN the stack gives, into the platform configuration', async () => {
    const gitValue = randomBytes(32).toString('base64url');
    const keyValue = randomBytes(32).toString('hex');
    const lambda = lambdaEnv({
      [gitState.arnEnvVar]: await createSecret(gitValue),
      [envEncryption.arnEnvVar]: await createSecret(keyValue),
    });

    await lambda.run(() => loadSecrets(['gitState', 'envEncryption']));
    expect(lambda.run(() => config.gitStateSecret())).toBe(gitValue);
    expect(lambda.run(() => config.envEncryptionKey())).toBe(keyValue);
  });

  it('loads only the secrets it is asked for', async () => {
    const lambda = lambdaEnv({
      [gitState.arnEnvVar]: await createSecret('git-state-only'),
      [envEncryption.arnEnvVar]: await createSecret(randomBytes(32).toString('hex')),
    });

    await lambda.run(() => loadSecrets(['gitState']));
    expect(lambda.run(() => config.secretValue('gitState'))).toBe('git-state-only');
    expect(lambda.run(() => config.secretValue('envEncryption'))).toBeUndefined();
  });

  it('keeps a value already in the environment and never fetches its ARN', async () => {
    const lambda = lambdaEnv({ [gitState.envVar]: 'given-directly', [gitState.arnEnvVar]: nowhere() });
    await expect(lambda.run(() => loadSecrets(['gitState']))).resolves.toBeUndefined();
    expect(lambda.run(() => config.secretValue('gitState'))).toBe('given-directly');

    // The same ARN with no value given is fetched, and fails: so the call above really was not made.
    delete lambda.owned[gitState.envVar];
    await expect(lambda.run(() => loadSecrets(['gitState']))).rejects.toThrow();
    expect(lambda.run(() => config.secretValue('gitState'))).toBeUndefined();
  });

  it('does nothing when neither the value nor an ARN is given (lib/config.ts then names the missing variable)', async () => {
    const lambda = lambdaEnv({});
    await lambda.run(() => loadSecrets(['envEncryption']));
    expect(() => lambda.run(() => config.envEncryptionKey())).toThrow('Configuration variable ENV_ENCRYPTION_KEY is not set');
  });

  it("accepts what Secrets Manager generates with the stack's options as the encryption key", async () => {
    // The options of the EnvEncryptionKey secret in infra/state.ts (the infra test pins them in the template).
    const { RandomPassword } = await secretsManager().send(
      new GetRandomPasswordCommand({
        PasswordLength: 64,
        ExcludeUppercase: true,
        ExcludePunctuation: true,
        IncludeSpace: false,
        ExcludeCharacters: 'ghijklmnopqrstuvwxyz',
      }),
    );
    expect(RandomPassword).toMatch(/^[0-9a-f]{64}$/);
    expect(parseEnvEncryptionKey(RandomPassword!)).toHaveLength(32);
  });
});

describe('handlers that need a secret, given only its ARN', () => {
  // Each handler file is imported on its first request, so its cold-start load runs against these variables.
  let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;
  const gitValue = randomBytes(32).toString('base64url');
  const keyValue = randomBytes(32).toString('hex');

  beforeAll(async () => {
    m = await makeTeamWithRoles('Secret Keepers');
    // The platform as a stack configures it: the ARNs, no values.
    delete platform.env[gitState.envVar];
    delete platform.env[envEncryption.envVar];
    platform.env[gitState.arnEnvVar] = await createSecret(gitValue);
    platform.env[envEncryption.arnEnvVar] = await createSecret(keyValue);
  });
  afterAll(restoreEnvironment);

  it('GET /api/v1/auth/git-host/connect signs the state with the key from Secrets Manager', async () => {
    const reply = await platform.api('GET', `/api/v1/auth/git-host/connect?team_id=${m.team.id}`, { token: m.admin.token });
    expect(reply.status).toBe(200);
    const check = verifyConnectState(reply.body.data.state, new Date(), { secret: gitValue, verifier: reply.body.data.verifier });
    expect(check).toMatchObject({ ok: true, teamId: m.team.id, userId: m.admin.user!.user_id });
  });

  it('PUT and bulk import of environment variables seal values under the 64-hex key from Secrets Manager', async () => {
    const { projectId } = await putProjectFixture({ teamId: m.team.id });
    const one = await platform.api('PUT', `/api/v1/projects/${projectId}/env/API_TOKEN`, {
      token: m.admin.token,
      body: { value: 'tok-s3cret', environment: 'production' },
    });
    expect(one.status).toBe(201);
    const bulk = await platform.api('POST', `/api/v1/projects/${projectId}/env/bulk`, {
      token: m.admin.token,
      body: { content: 'DATABASE_URL=postgres://app:pw@db/app\n', environment: 'preview' },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.data.created).toEqual(['DATABASE_URL']);

    platform.env[envEncryption.envVar] = keyValue;
    for (const [environment, name, value] of [
      ['production', 'API_TOKEN', 'tok-s3cret'],
      ['preview', 'DATABASE_URL', 'postgres://app:pw@db/app'],
    ] as const) {
      const item = await dynamo().send(
        new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, environment, name) }),
      );
      expect(decryptEnvValue(item.Item!.value_sealed, { projectId, environment, name })).toBe(value);
    }
    // Not under the key the local platform generated for this run.
    platform.env[envEncryption.envVar] = saved[envEncryption.envVar]!;
    const item = await dynamo().send(
      new GetCommand({ TableName: config.tableName(), Key: keys.envVariable(projectId, 'production', 'API_TOKEN') }),
    );
    expect(() => decryptEnvValue(item.Item!.value_sealed, { projectId, environment: 'production', name: 'API_TOKEN' })).toThrow();
  });
});
