import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DoorRequest, OpenDoorReply } from './door.ts';

/**
 * A Node HTTP request as the door's request, its body the request stream itself (never buffered here: the door
 * counts it as it arrives and refuses it past 10 MiB). The signal aborts when the caller goes away before the reply
 * has been written. Used by the local platform's door and the cloud's container door alike.
 */
export function doorRequestOfIncoming(req: IncomingMessage, res: ServerResponse, hostname: string): DoorRequest {
  const caller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) caller.abort();
  });
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
  const method = (req.method ?? 'GET').toUpperCase();
  return {
    hostname,
    method,
    target: req.url ?? '/',
    headers,
    body: method === 'GET' || method === 'HEAD' ? null : req,
    signal: caller.signal,
  };
}

/** The door's reply head written on a Node response (each Set-Cookie its own header line), which then takes the body. */
export function openNodeReply(res: ServerResponse): OpenDoorReply {
  return (head) => {
    const out: Record<string, string | string[]> = { ...head.headers };
    if (head.cookies.length > 0) out['set-cookie'] = head.cookies;
    res.writeHead(head.statusCode, out);
    return res;
  };
}
