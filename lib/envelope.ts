import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

export interface Meta {
  request_id: string;
  timestamp: string;
  trace_id: string;
}

export function meta(requestId: string, traceId: string): Meta {
  return { request_id: requestId, timestamp: new Date().toISOString(), trace_id: traceId };
}

const jsonHeaders = { 'content-type': 'application/json; charset=utf-8' };

export function successResponse(
  status: number,
  data: unknown,
  m: Meta,
  headers: Record<string, string> = {},
): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { ...jsonHeaders, ...headers },
    body: JSON.stringify({ data, meta: m }),
  };
}

export function errorResponse(
  status: number,
  body: { code: string; error: string; details: unknown },
  m: Meta,
  headers: Record<string, string> = {},
): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { ...jsonHeaders, ...headers },
    body: JSON.stringify({ code: body.code, details: body.details ?? null, error: body.error, meta: m }),
  };
}
