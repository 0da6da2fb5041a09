import { defineHandler } from '../../../lib/http/pipeline.ts';
import { meView } from '../../../lib/identity/me.ts';

export const handler = defineHandler('GET /api/v1/me', {}, async ({ principal }) => ({ data: meView(principal!.user!) }));
