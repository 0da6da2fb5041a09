import { createHmac, randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo } from '../aws/clients.ts';
import { config } from '../config.ts';
import { isConditionalCheckFailure } from '../db/errors.ts';
import { keys } from '../db/keys.ts';
import { decryptEnvValue, encryptEnvValue } from '../env/encryption.ts';
import { ApiError } from '../errors/api-error.ts';
import { PROJECT_NOT_FOUND } from '../errors/catalogue/sites.ts';
import { getProjectItem, type ProjectItem } from '../projects/records.ts';

/**
 * A project's completion callback secret: the key of the `X-Slipway-Signature` on every callback delivery. Made on
 * first need (the first read by a team admin, or the first delivery) by a conditional write on the project item,
 * so two first reads at once answer the same secret; rotation replaces it. Sealed at rest with the environment
 * variables' key, bound to the project and the field, as the Git webhook secret is (lib/git/git-secrets.ts).
 */
const FIELD = 'functions_callback_secret_sealed';
const context = (projectId: string) => ({ projectId, environment: 'functions', name: 'callback_secret' });

/** 6 + 43 characters: 32 random bytes, base64url. */
export const newCallbackSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;

/** The active project item's field, set; `onlyIfAbsent` keeps a secret another writer made first. */
async function writeSecret(projectId: string, secret: string, onlyIfAbsent: boolean): Promise<boolean> {
  try {
    await dynamo().send(
      new UpdateCommand({
        TableName: config.tableName(),
        Key: keys.project(projectId),
        UpdateExpression: 'SET #field = :sealed',
        ConditionExpression: `#status = :active${onlyIfAbsent ? ' AND attribute_not_exists(#field)' : ''}`,
        ExpressionAttributeNames: { '#status': 'status', '#field': FIELD },
        ExpressionAttributeValues: { ':active': 'active', ':sealed': encryptEnvValue(secret, context(projectId)) },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailure(error)) return false;
    throw error;
  }
}

/** The project's secret, made now when it has none. 404 PROJECT_NOT_FOUND when the project is not active. */
export async function callbackSecret(projectId: string, project?: ProjectItem): Promise<string> {
  const sealed = project?.[FIELD];
  if (typeof sealed === 'string') return decryptEnvValue(sealed, context(projectId));
  const secret = newCallbackSecret();
  if (await writeSecret(projectId, secret, true)) return secret;
  // Another first read (or delivery) made it a moment ago: that one is the secret.
  const item = await getProjectItem(projectId, true);
  if (item?.status !== 'active' || typeof item[FIELD] !== 'string') throw new ApiError(PROJECT_NOT_FOUND);
  return decryptEnvValue(item[FIELD], context(projectId));
}

/** A new secret; deliveries signed from now on use it, and the previous one stops verifying at once. */
export async function rotateCallbackSecret(projectId: string): Promise<string> {
  const secret = newCallbackSecret();
  if (!(await writeSecret(projectId, secret, false))) throw new ApiError(PROJECT_NOT_FOUND);
  return secret;
}

/** `X-Slipway-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">` (Stripe's scheme). */
export function callbackSignature(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}
