import type { SslErrorCode } from './tls-attempts.ts';

/** How a step of a TLS attempt fails: the domain's `ssl_error_code`, and what AWS said (for `ssl_error`). */
export class AttemptFailure extends Error {
  constructor(
    readonly code: SslErrorCode,
    readonly detail?: string,
  ) {
    super(code);
  }
}

export const errorName = (error: unknown) => (error as Error)?.name ?? 'Error';
