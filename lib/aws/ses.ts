import { SESv2Client } from '@aws-sdk/client-sesv2';
import { lazyClient } from './clients.ts';

export const ses = /* @__PURE__ */ lazyClient('sesv2', ({ region, endpoint }) => new SESv2Client({ region, endpoint }));
