import { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { lazyClient } from './clients.ts';

/** CloudFront is a global service; its API lives in us-east-1 whatever the stack's region. */
export const cloudfront = /* @__PURE__ */ lazyClient(
  'cloudfront',
  ({ endpoint }) => new CloudFrontClient({ region: 'us-east-1', endpoint }),
);
