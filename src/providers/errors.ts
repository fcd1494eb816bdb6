/** The one error of the providers area: a model API failed to answer usefully. */
import { ErrorCode, InterlockError, type InterlockErrorOptions } from '../errors.js';

/** Code of {@link ModelProviderError}. */
export const MODEL_REQUEST_FAILED = ErrorCode.MODEL_REQUEST_FAILED;

/** Details of a failed model request. */
export interface ModelProviderErrorDetails {
  /** The provider's name, e.g. `openai`. */
  provider: string;
  /** The HTTP status, when the API answered. */
  status?: number | undefined;
  /** The API's error type, e.g. `invalid_request_error`, `rate_limit_error`. */
  type?: string | undefined;
  /** The API's request id (`x-request-id`, `request-id`), to quote to the provider's support. */
  requestId?: string | undefined;
}

/**
 * The model API answered with an error status, or with a body that is not its documented format.
 * Code `MODEL_REQUEST_FAILED`. Timeouts and cancellation have their own codes (`REQUEST_TIMEOUT`,
 * `REQUEST_CANCELLED`); an unreachable API is `CONNECTION_FAILED`.
 */
export class ModelProviderError extends InterlockError {
  readonly provider: string;
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly requestId: string | undefined;

  constructor(
    message: string,
    details: ModelProviderErrorDetails,
    options: Pick<InterlockErrorOptions, 'cause'> = {},
  ) {
    super(MODEL_REQUEST_FAILED, message, options);
    this.provider = details.provider;
    this.status = details.status;
    this.type = details.type;
    this.requestId = details.requestId;
  }
}
