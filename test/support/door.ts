import { request } from 'node:http';

export interface DoorResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  /** Each body chunk with the milliseconds since the request was sent. */
  chunks: { at: number; text: string }[];
  /** Set when the connection was cut before the reply ended. */
  cut: boolean;
}

/**
 * A request to the local HTTPS door with a given Host header, recording when
 * each body chunk arrived: Node's fetch neither resolves `*.localhost` here nor
 * lets a caller set Host, so this connects to 127.0.0.1 as a browser would.
 */
export function doorRequest(
  port: number,
  host: string,
  path = '/',
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<DoorResponse> {
  return new Promise((resolve, reject) => {
    const sent = Date.now();
    const req = request(
      { host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { host, ...options.headers }, agent: false },
      (res) => {
        const chunks: DoorResponse['chunks'] = [];
        const parts: Buffer[] = [];
        let cut = false;
        res.on('data', (c: Buffer) => {
          parts.push(c);
          chunks.push({ at: Date.now() - sent, text: c.toString('utf8') });
        });
        const done = () => {
          const body = Buffer.concat(parts);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8'), chunks, cut });
        };
        res.on('end', done);
        res.on('aborted', () => (cut = true));
        res.on('error', () => {
          cut = true;
          done();
        });
        res.on('close', () => {
          if (!res.complete) {
            cut = true;
            done();
          }
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** `{label}.fn.localhost:PORT` */
export const functionHostname = (label: string, port: number) => `${label}.fn.localhost:${port}`;
