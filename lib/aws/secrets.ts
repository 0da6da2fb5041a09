import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretDefinitions, type SecretName } from '../resources.ts';
import { lazyClient } from './clients.ts';
import { config } from '../config.ts';

export const secretsManager = /* @__PURE__ */ lazyClient(
  'secretsmanager',
  ({ region, endpoint }) => new SecretsManagerClient({ region, endpoint }),
);

/** One fetch per secret per container, shared by every caller that asks while it is in flight. */
const inFlight = new Map<SecretName, Promise<void>>();

/**
 * Puts each named secret's value into its environment variable, so that
 * lib/config.ts can stay synchronous. A value already in the environment wins
 * and nothing is fetched (the local platform sets values directly); otherwise,
 * when the stack gave the secret's ARN, the value is read once from Secrets
 * Manager. Handlers call this with top-level await, so the fetch happens on
 * cold start and a failure fails the init (Lambda retries it on the next
 * request) instead of answering requests without the key.
 *
 * When neither variable is set, nothing happens here: lib/config.ts then
 * names the missing variable at the point of use.
 */
export async function loadSecrets(names: readonly SecretName[]): Promise<void> {
  await Promise.all(names.map((name) => loadSecret(name)));
}

function loadSecret(name: SecretName): Promise<void> {
  const { envVar, arnEnvVar } = secretDefinitions[name];
  if (config.secretValue(name)) return Promise.resolve();
  const arn = config.secretArn(name);
  if (!arn) return Promise.resolve();
  let pending = inFlight.get(name);
  if (!pending) {
    pending = (async () => {
      const { SecretString } = await secretsManager().send(new GetSecretValueCommand({ SecretId: arn }));
      if (!SecretString) throw new Error(`Secret ${arnEnvVar}=${arn} has no string value`);
      // Another caller may have set it meanwhile (the local platform, a test); a given value still wins.
      if (!config.secretValue(name)) process.env[envVar] = SecretString;
    })().finally(() => inFlight.delete(name));
    inFlight.set(name, pending);
  }
  return pending;
}
