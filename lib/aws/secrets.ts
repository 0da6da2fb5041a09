import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretDefinitions, type SecretName } from '../resources.ts';
import { lazyClient } from './clients.ts';
import { config, platformEnv } from '../config.ts';

export const secretsManager = /* @__PURE__ */ lazyClient(
  'secretsmanager',
  ({ region, endpoint }) => new SecretsManagerClient({ region, endpoint }),
);

/**
 * Fetches each named secret's value into the platform's configuration
 * (lib/config.ts PlatformEnv), so that config stays synchronous. A value the
 * platform already has wins and nothing is fetched (the local platform sets
 * values directly); otherwise, when the stack gave the secret's ARN, the value
 * is read once per platform (once per Lambda container) from Secrets Manager.
 * Handlers call this with top-level await, so the fetch happens on cold start
 * and a failure fails the init (Lambda retries it on the next request)
 * instead of answering requests without the key.
 *
 * When neither variable is set, nothing happens here: lib/config.ts then
 * names the missing variable at the point of use.
 */
export async function loadSecrets(names: readonly SecretName[]): Promise<void> {
  await Promise.all(names.map((name) => loadSecret(name)));
}

function loadSecret(name: SecretName, again = false): Promise<void> {
  const env = platformEnv();
  const fetched = env.fetchedSecrets.get(name);
  if (config.secretValue(name) && !(again && fetched)) return Promise.resolve();
  const arn = config.secretArn(name);
  if (!arn) return Promise.resolve();
  let pending = env.secretFetches.get(name);
  if (!pending) {
    pending = (async () => {
      const { SecretString } = await secretsManager().send(new GetSecretValueCommand({ SecretId: arn }));
      if (!SecretString) throw new Error(`Secret ${secretDefinitions[name].arnEnvVar}=${arn} has no string value`);
      env.fetchedSecrets.set(name, { value: SecretString, at: Date.now() });
    })().finally(() => env.secretFetches.delete(name));
    env.secretFetches.set(name, pending);
  }
  return pending;
}

/**
 * Reads a secret fetched from Secrets Manager again when the value held is older than `maxAgeMs`
 * (a rotation puts a new value while warm containers run: the forge signing keys, lib/git/forge-keys.ts).
 * A value given in the environment is never replaced. A failed read keeps the value held.
 */
export async function refreshSecret(name: SecretName, maxAgeMs: number): Promise<void> {
  const fetched = platformEnv().fetchedSecrets.get(name);
  if (fetched === undefined) return loadSecret(name);
  if (Date.now() - fetched.at < maxAgeMs) return;
  await loadSecret(name, true).catch(() => undefined);
}
