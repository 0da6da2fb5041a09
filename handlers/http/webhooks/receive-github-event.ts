import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { githubEvent, githubSignatureMatches } from '../../../lib/builds/webhooks/github.ts';
import { MAX_WEBHOOK_BYTES, receiveWebhook } from '../../../lib/builds/webhooks/receive.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Webhook secrets are sealed with the environment variables' key.
await loadSecrets(['envEncryption']);

export const handler = defineHandler(
  'POST /api/v1/webhooks/git/github',
  // The signature covers the bytes as sent: the body reaches the check unparsed.
  { rawBody: { maxBytes: MAX_WEBHOOK_BYTES, mediaType: 'application/json' } },
  async ({ headers, rawBody }) => {
    const signature = headers['x-hub-signature-256'];
    const data = await receiveWebhook({
      provider: 'github',
      rawBody,
      signature,
      eventType: headers['x-github-event'],
      deliveryId: headers['x-github-delivery'],
      parse: githubEvent,
      verify: (secret) => githubSignatureMatches(signature, rawBody, secret),
    });
    return { status: 202, data };
  },
);
