/**
 * Typed failures of an environment server. Every failure of the HTTP layer becomes an `EnvError` carrying the
 * status, route, URL and body, so that a caller can tell an environment failure apart from a reward of 0.
 */

/**
 * What went wrong:
 * - `http`: a 4xx or 5xx answer;
 * - `error_body`: a 200 whose body is `{"error": ...}` (TextCraft, BabyAI, SciWorld, ALFWorld report errors so);
 * - `shape`: a 200 whose body does not have the shape the adapter expects;
 * - `timeout`: no full answer within the request timeout;
 * - `connection`: refused, reset or dropped before an answer;
 * - `unavailable`: no server of the environment is healthy.
 */
export type EnvErrorKind = "http" | "error_body" | "shape" | "timeout" | "connection" | "unavailable";

/** Fields of an `EnvError`. */
export interface EnvErrorInit {
  kind: EnvErrorKind;
  route: string;
  url: string;
  status?: number | null;
  body?: string | null;
  attempts?: number;
  cause?: unknown;
}

const BODY_LIMIT = 2000;

/** A failed request to an environment server. */
export class EnvError extends Error {
  /** Always "EnvError". */
  override name = "EnvError";
  /** What went wrong: an HTTP status, an error body, a malformed answer, a timeout, a refused connection, no server. */
  readonly kind: EnvErrorKind;
  /** The route, such as `POST /step`. */
  readonly route: string;
  /** The full URL of the last attempt. */
  readonly url: string;
  /** The HTTP status, or null when no answer came. */
  readonly status: number | null;
  /** The response body (cut to 2000 characters), or null when none came. */
  readonly body: string | null;
  /** How many attempts were made. */
  readonly attempts: number;

  /** Builds the error; the message names the route, the kind and the status or body. */
  constructor(message: string, init: EnvErrorInit) {
    const body = init.body == null ? null : init.body.slice(0, BODY_LIMIT);
    super(`${init.route} (${init.url}): ${message}`, { cause: init.cause });
    this.kind = init.kind;
    this.route = init.route;
    this.url = init.url;
    this.status = init.status ?? null;
    this.body = body;
    this.attempts = init.attempts ?? 1;
  }

  /** True for the kinds worth retrying: 5xx, timeouts and connection failures. */
  get retryable(): boolean {
    return this.kind === "timeout" || this.kind === "connection" ||
      (this.kind === "http" && this.status !== null && this.status >= 500);
  }
}

/** Narrows an unknown thrown value to an `EnvError`. */
export function isEnvError(e: unknown): e is EnvError {
  return e instanceof EnvError;
}
