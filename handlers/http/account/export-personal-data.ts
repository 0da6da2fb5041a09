import { defineHandler } from '../../../lib/http/pipeline.ts';
import { exportPersonalData } from '../../../lib/privacy/export.ts';

export const handler = defineHandler('GET /api/v1/me/export', {}, async ({ principal }) => {
  // The export is personal data: never cached by a browser or a proxy.
  return { data: await exportPersonalData(principal!.user!), headers: { 'Cache-Control': 'no-store' } };
});
