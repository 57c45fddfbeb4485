import type { GatewayError } from "@turnpike/providers";
import { clientRequestId } from "../http/request-id";
import type { Logger } from "../log/logger";

/** What a refusal's log line needs besides the error: who logs, which request, and its model once known. */
export interface Refusal {
  readonly logger: Logger;
  readonly request: Request;
  readonly requestId: string;
  /** The model the body named (undefined until it is read, or when the route takes none). */
  readonly model?: string | undefined;
}

/**
 * One line per 4xx or 5xx the gateway answers (`msg: "refused"`): the request id, the route, the
 * model when known, the status the client saw, the error type and the very message it was sent —
 * so an operator sees why a client was turned away without asking it. At `warn` for a 4xx (the
 * client's doing), `error` for a 5xx. Never the body, never a header value.
 */
export function logRefusal(refusal: Refusal, status: number, err: GatewayError, body: unknown): void {
  const { pathname } = new URL(refusal.request.url);
  // Every format's envelope holds `error: {type, message}`: the type as the client read it.
  const sent = (body as { error?: { type?: unknown; message?: unknown } } | null)?.error; // a rendered error body, read leniently
  const fields = {
    request_id: refusal.requestId,
    client_request_id: clientRequestId(refusal.request),
    route: `${refusal.request.method} ${pathname}`,
    model: refusal.model,
    status,
    error_type: typeof sent?.type === "string" ? sent.type : err.type,
    error_code: err.code,
    message: typeof sent?.message === "string" ? sent.message : err.message,
  };
  if (status >= 500) refusal.logger.error("refused", fields);
  else refusal.logger.warn("refused", fields);
}
