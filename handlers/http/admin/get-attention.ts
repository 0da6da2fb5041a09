import { attentionQueues } from '../../../lib/attention/queues.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Spec endpoint 19: every queue is read by key from its index partition (lib/attention/queues.ts).
export const handler = defineHandler('GET /api/v1/admin/attention', {}, async () => {
  return { data: await attentionQueues() };
});
