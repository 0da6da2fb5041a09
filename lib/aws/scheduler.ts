import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { lazyClient } from './clients.ts';

export const scheduler = /* @__PURE__ */ lazyClient('scheduler', ({ region, endpoint }) => new SchedulerClient({ region, endpoint }));
