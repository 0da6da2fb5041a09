/** A part of the local platform that plays a cloud service (a queue's event source mapping, the scheduler, ...). */
export interface LocalDriver {
  name: string;
  start(): void;
  stop(): Promise<void>;
}
