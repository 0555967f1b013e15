/** Stable error codes the console and scripts can rely on; the message is for people. */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'VALIDATION_FAILED'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'SETUP_REQUIRED'
  | 'ALREADY_SET_UP'
  | 'FEATURE_DISABLED'
  | 'INVALID_CREDENTIALS'
  | 'USER_DISABLED'
  | 'INSUFFICIENT_QUOTA'
  /** An administrator must enrol a second factor first (AdminTwoFactorRequired, docs/adr/0044). */
  | 'SECOND_FACTOR_REQUIRED'
  /** A provider the console back end called (model list, balance) failed or did not answer. */
  | 'UPSTREAM_FAILED'
  /** The row belongs to a Kubernetes resource (docs/adr/0017); the message names it. */
  | 'MANAGED_BY_KUBERNETES'
  /** The database is unreachable (an outage, a failover): a 503 with Retry-After, to try again shortly. */
  | 'DATABASE_UNAVAILABLE'
  | 'INTERNAL';

const defaultStatus: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  SETUP_REQUIRED: 400,
  ALREADY_SET_UP: 400,
  FEATURE_DISABLED: 403,
  INVALID_CREDENTIALS: 400,
  USER_DISABLED: 403,
  INSUFFICIENT_QUOTA: 400,
  SECOND_FACTOR_REQUIRED: 403,
  UPSTREAM_FAILED: 502,
  MANAGED_BY_KUBERNETES: 409,
  DATABASE_UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** The one error type services throw; each app's error handler turns it into its protocol's shape. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;

  constructor(code: ErrorCode, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? defaultStatus[code];
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
