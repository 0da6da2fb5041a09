// Types of what the TypeScript side imports from runner.mjs (plain JavaScript): the door's framing.
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

export declare const FRAME: Readonly<{ HEAD: 1; BODY: 2; END: 3; RESET: 4; CREDIT: 5 }>;
export declare const FRAME_HEADER_BYTES: number;
export declare const MAX_FRAME_BODY: number;
export declare const STREAM_WINDOW: number;
export declare function encodeFrame(type: number, stream: number, payload?: Uint8Array): Buffer;
export declare function creditPayload(bytes: number): Buffer;
export declare function frameParser(onFrame: (type: number, stream: number, payload: Buffer) => void): (chunk: Buffer) => void;
export type FrameWrite = (type: number, stream: number, payload?: Uint8Array) => void;
export declare function frameWriter(socket: Socket): FrameWrite;
export declare class SendWindow {
  constructor(size?: number);
  available: number;
  closed: boolean;
  grant(bytes: number): void;
  close(): void;
  ready(): Promise<boolean>;
}
export declare function sendBody(write: FrameWrite, stream: number, window: SendWindow, chunk: Uint8Array): Promise<boolean>;
export interface ReceivedBody {
  readonly stream: Readable;
  readonly ended: boolean;
  push(chunk: Uint8Array): void;
  end(): void;
  fail(error: Error): void;
}
export declare function receiveBody(sendCredit: (bytes: number) => void): ReceivedBody;
