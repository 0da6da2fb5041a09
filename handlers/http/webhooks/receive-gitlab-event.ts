import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { gitlabEvent, gitlabTokenMatches } from '../../../lib/builds/webhooks/gitlab.ts';
import { MAX_WEBHOOK_BYTES, receiveWebhook } from '../../../lib/builds/webhooks/receive.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Webhook secrets are sealed with the environment variables' key.
await loadSecrets(['envEncryption']);

export const handler = defineHandler(
  'POST /api/v1/webhooks/git/gitlab',
  { rawBody: { maxBytes: MAX_WEBHOOK_BYTES, mediaType: 'application/json' } },
  async ({ headers, rawBody }) => {
    const token = headers['x-gitlab-token'];
    const data = await receiveWebhook({
      provider: 'gitlab',
      rawBody,
      signature: token,
      eventType: headers['x-gitlab-event'],
      deliveryId: headers['x-gitlab-event-uuid'],
      parse: gitlabEvent,
      verify: (secret) => gitlabTokenMatches(token, secret),
    });
    return { status: 202, data };
  },
);
