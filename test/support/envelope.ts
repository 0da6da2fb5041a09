import { expect } from 'vitest';

/**
 * An error reply is the spec's error envelope, exactly: `code`, `details`,
 * `error` and `meta` {request_id, timestamp, trace_id}, with this status and code.
 */
export function expectEnvelopeError(reply: { status: number; body: any }, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body?.code }).toEqual({ status, code });
  expect(Object.keys(reply.body).sort()).toEqual(['code', 'details', 'error', 'meta']);
  expect(typeof reply.body.error).toBe('string');
  expect(reply.body.error.length).toBeGreaterThan(0);
  expect(reply.body.meta).toEqual({
    request_id: expect.any(String),
    timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    trace_id: expect.stringMatching(/^[0-9a-f]{32}$/),
  });
}
