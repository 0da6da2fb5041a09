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
/** When each value fetched from Secrets Manager was fetched (a value given in the environment is not here). */
const fetchedAt = new Map<SecretName, number>();

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

function loadSecret(name: SecretName, again = false): Promise<void> {
  const { envVar, arnEnvVar } = secretDefinitions[name];
  if (config.secretValue(name) && !(again && fetchedAt.has(name))) return Promise.resolve();
  const arn = config.secretArn(name);
  if (!arn) return Promise.resolve();
  let pending = inFlight.get(name);
  if (!pending) {
    pending = (async () => {
      const { SecretString } = await secretsManager().send(new GetSecretValueCommand({ SecretId: arn }));
      if (!SecretString) throw new Error(`Secret ${arnEnvVar}=${arn} has no string value`);
      // Another caller may have set it meanwhile (the local platform, a test); a given value still wins.
      if (!config.secretValue(name) || fetchedAt.has(name)) {
        process.env[envVar] = SecretString;
        fetchedAt.set(name, Date.now());
      }
    })().finally(() => inFlight.delete(name));
    inFlight.set(name, pending);
  }
  return pending;
}

/**
 * Reads a secret fetched from Secrets Manager again when the value held is older than `maxAgeMs`
 * (a rotation puts a new value while warm containers run: the forge signing keys, lib/builds/forge-keys.ts).
 * A value given in the environment is never replaced. A failed read keeps the value held.
 */
export async function refreshSecret(name: SecretName, maxAgeMs: number): Promise<void> {
  const at = fetchedAt.get(name);
  if (at === undefined) return loadSecret(name);
  if (Date.now() - at < maxAgeMs) return;
  await loadSecret(name, true).catch(() => undefined);
}
