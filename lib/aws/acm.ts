import { ACMClient } from '@aws-sdk/client-acm';
import { lazyClient } from './clients.ts';

/** CloudFront takes certificates from ACM in us-east-1 only, whatever the stack's region. */
export const acm = /* @__PURE__ */ lazyClient('acm', ({ endpoint }) => new ACMClient({ region: 'us-east-1', endpoint }));
