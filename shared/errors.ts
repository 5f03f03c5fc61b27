/**
 * The one error type of Portico. Branch on `code`, never on class.
 *
 * `message` is safe to show to a client or a model; the text of a database or
 * upstream failure belongs in `cause`, which only reaches the log.
 */
const ERROR_CODES = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_token: 401,
  connection_revoked: 401,
  unauthenticated: 401,
  insufficient_scope: 403,
  forbidden: 403,
  forbidden_cross_tenant: 403,
  csrf_failed: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  headers_too_large: 431,
  unsupported_media_type: 415,
  confirmation_required: 200,
  unknown_tool: 400,
  invalid_arguments: 400,
  rate_limited: 429,
  timeout: 504,
  unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * 5xx codes whose messages Portico writes itself, for conditions a caller can act on (wait, try
 * again, call with less): shown like a 4xx message. Their causes stay in the log, and anything
 * unexpected is still `internal` with no detail.
 */
const SHOWN_5XX: ReadonlySet<ErrorCode> = new Set(['timeout', 'unavailable']);

export interface AppErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  status?: number;
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /**
   * Whether `message` may be shown to the caller: below 500 (oidc-provider's rule), and the 5xx
   * codes of SHOWN_5XX. Whether the failure is logged as an error is `status >= 500`, not this.
   */
  readonly expose: boolean;
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code];
    this.expose = this.status < 500 || SHOWN_5XX.has(code);
    this.details = options.details;
    this.headers = options.headers;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof Error && error.name === 'AppError' && typeof (error as AppError).code === 'string';
}

/** Anything that is not an AppError becomes `internal`, with no detail. */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  return new AppError('internal', 'internal error', { cause: error });
}

export interface RestErrorBody {
  error: { code: ErrorCode; message: string; request_id?: string; details?: Record<string, unknown> };
}

export function restErrorBody(error: AppError, requestId?: string): RestErrorBody {
  return {
    error: {
      code: error.code,
      message: error.expose ? error.message : 'internal error',
      ...(requestId ? { request_id: requestId } : {}),
      ...(error.expose && error.details ? { details: error.details } : {}),
    },
  };
}

/** A command line used wrongly (a missing or unknown option): the CLIs print their usage and exit 2 (docs/errors.md). */
export class UsageError extends Error {}
