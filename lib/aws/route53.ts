import { Route53Client } from '@aws-sdk/client-route-53';
import { lazyClient } from './clients.ts';

/** Route 53 is a global service; its API lives in us-east-1 whatever the stack's region. */
export const route53 = /* @__PURE__ */ lazyClient('route53', ({ endpoint }) => new Route53Client({ region: 'us-east-1', endpoint }));
