// Types of protocol.mjs (plain JavaScript, run by node inside the sandbox too): the door <-> runner framing
// and header names, imported by every side.
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

export declare const OUTCOME_HEADER: 'x-slipway-runner-outcome';
export declare const RUNNER_COLD_START_HEADER: 'x-slipway-runner-cold-start';
export declare const RUNNER_BOOT_MS_HEADER: 'x-slipway-runner-boot-ms';
export declare const RUNNER_INSTANCE_HEADER: 'x-slipway-runner-instance';
export declare const RUNNER_ERROR_HEADER: 'x-slipway-runner-error';
export declare const INTERNAL_HEADER_PREFIX: 'x-slipway-';
export declare const HOP_BY_HOP: ReadonlySet<string>;
export declare const TAILED_LENGTH_BYTES: number;
export declare function tailedBodyPiece(piece: Uint8Array): Buffer;
export declare function tailedBodyEnd(lines: { at: string; stream: 'stdout' | 'stderr'; line: string }[]): Buffer;

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
