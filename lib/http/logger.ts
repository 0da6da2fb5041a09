import { Logger } from '@aws-lambda-powertools/logger';

/** One structured JSON logger per container; each request logs through a child carrying its ids. */
export const logger = new Logger({ serviceName: 'slipway' });

export type RequestLogger = Logger;

export function requestLogger(requestId: string, traceId: string, route: string): Logger {
  return logger.createChild({ persistentKeys: { request_id: requestId, trace_id: traceId, route } });
}
