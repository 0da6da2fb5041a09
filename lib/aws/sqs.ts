import { SQSClient } from '@aws-sdk/client-sqs';
import { lazyClient } from './clients.ts';

export const sqs = /* @__PURE__ */ lazyClient('sqs', ({ region, endpoint }) => new SQSClient({ region, endpoint }));
