import { S3Client } from '@aws-sdk/client-s3';
import { lazyClient } from './clients.ts';

export const s3 = /* @__PURE__ */ lazyClient('s3', (opts) => new S3Client(opts));
