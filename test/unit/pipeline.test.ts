import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { access } from '../../lib/access/rules.ts';
import { logger } from '../../lib/logger.ts';
import { buildHandler } from '../../lib/http/pipeline.ts';

const event = (headers: Record<string, string> = {}): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'GET /boom',
    rawPath: '/boom',
    rawQueryString: '',
    headers,
    isBase64Encoded: false,
    requestContext: { requestId: 'req-123', domainName: 'api.test', http: { method: 'GET', path: '/boom', sourceIp: '127.0.0.1' } },
  }) as unknown as APIGatewayProxyEventV2;

const context = () => ({ awsRequestId: 'aws-1', getRemainingTimeInMillis: () => 1000 }) as unknown as Context;

afterEach(() => vi.restoreAllMocks());

/** The lines the logger writes at ERROR and above (ERROR records go to stderr). */
function errorLines(): string[] {
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  logger.setLogLevel('ERROR');
  return lines;
}

describe('an unexpected error', () => {
  it('becomes a 500 envelope with no stack or internal text, logged with the request and trace ids', async () => {
    const lines = errorLines();
    const handler = buildHandler('GET /boom', access.public(), {}, async () => {
      throw new Error('database password is hunter2');
    });
    const result = await handler(event({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), context());
    logger.setLogLevel('CRITICAL');
    expect(result.statusCode).toBe(500);
    const body = JSON.parse(result.body!);
    expect(body).toEqual({
      code: 'INTERNAL_ERROR',
      details: null,
      error: 'Something went wrong on our side. Try again later.',
      meta: { request_id: 'req-123', timestamp: expect.any(String), trace_id: '0af7651916cd43dd8448eb211c80319c' },
    });
    expect(result.body).not.toContain('hunter2');
    expect(result.body).not.toContain('at ');
    const logged = lines
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.message === 'unexpected error');
    expect(logged).toMatchObject({ level: 'ERROR', request_id: 'req-123', trace_id: '0af7651916cd43dd8448eb211c80319c' });
  });
});

describe('a route that runs out of its Lambda time', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After before Lambda ends it, logged as out of time, not as an unexpected error', async () => {
    const lines = errorLines();
    let finished = false;
    const handler = buildHandler('GET /boom', access.public(), {}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      finished = true;
      return { data: {} };
    });
    // 150 ms left: the answer comes at 50 ms, the route's margin (100 ms) before Lambda's end.
    const result = await handler(event(), { awsRequestId: 'aws-2', getRemainingTimeInMillis: () => 150 } as unknown as Context);
    logger.setLogLevel('CRITICAL');
    expect(finished).toBe(false);
    expect(result.statusCode).toBe(503);
    expect(result.headers?.['retry-after'] ?? result.headers?.['Retry-After']).toBe('5');
    expect(JSON.parse(result.body!)).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: null,
      error: 'The service is temporarily unavailable. Try again later.',
    });
    const logged = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    expect(logged.map((l) => l.message)).toEqual(['request ran out of time: answered 503 before Lambda ends the route']);
    expect(logged[0]).toMatchObject({ level: 'ERROR', request_id: 'req-123', route: 'GET /boom' });
  });
});
