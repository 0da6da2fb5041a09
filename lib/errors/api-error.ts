/** One entry of the error catalogue (lib/errors/catalogue/<area>.ts): a stable code, its HTTP status and its default sentence. */
export interface ErrorEntry {
  readonly code: string;
  readonly status: number;
  readonly message: string;
}

/** The one typed error class; the middleware turns it into the error envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(entry: ErrorEntry, options: { message?: string; details?: unknown; headers?: Record<string, string> } = {}) {
    super(options.message ?? entry.message);
    this.name = 'ApiError';
    this.status = entry.status;
    this.code = entry.code;
    this.details = options.details ?? null;
    this.headers = options.headers ?? {};
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
