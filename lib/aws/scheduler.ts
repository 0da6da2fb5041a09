import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { lazyClient } from './clients.ts';

export const scheduler = lazyClient('scheduler', ({ region, endpoint }) => new SchedulerClient({ region, endpoint }));
