import { LambdaClient } from '@aws-sdk/client-lambda';
import { lazyClient } from './clients.ts';

/** The Lambda API: the functions router makes user-function Lambdas, the sweep removes those no record names. */
export const lambda = /* @__PURE__ */ lazyClient('lambda', (opts) => new LambdaClient({ region: opts.region, endpoint: opts.endpoint }));
