import { formatMessagesEvent, renderMessagesError } from "@turnpike/providers";
import { validateMessagesRequest } from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";
import { anthropicLimitHeaders } from "../limits/rate-limit-headers";
import { validationError } from "../http/read-body";
import type { ClientFormat } from "./client-format";
import { thinkingProofs, withoutThinking } from "./messages-thinking";
import { dropUnknownKnobs, MESSAGES_OPEN, refuseUnknownContent } from "./open-rest";

const STOP = formatSSE({ event: "message_stop", data: '{"type":"message_stop"}' });

/** The messages format (`POST /v1/messages`): also the pivot of every translation. */
export const messagesFormat: ClientFormat = {
  id: "messages",
  endpoint: "messages",
  pathPrefix: "/v1/messages",
  passthroughProtocol: "messages",
  inputAtStart: true,
  // The format's key header or either name of its version header.
  claims: (headers) => headers.has("x-api-key") || headers.has("anthropic-version") || headers.has("alpha-version"),
  validate(body) {
    const checked = validateMessagesRequest(body);
    if (!checked.ok) throw validationError(checked.issues);
    const request = checked.value;
    return {
      model: request.model,
      stream: request.stream === true,
      body,
      includeUsage: false,
      toPivot(target) {
        if (target === "messages") return { request, warnings: [] };
        // Toward another protocol: unknown content is refused, an unknown knob value dropped (open-rest.ts).
        refuseUnknownContent(request, MESSAGES_OPEN.content, target);
        const { body, warnings } = dropUnknownKnobs(request, MESSAGES_OPEN.knobs, target);
        return { request: body, warnings };
      },
      encodeReply: (reply) => reply,
      encoder: (_model, write) => ({ push: (ev) => write(formatMessagesEvent(ev)), end() {} }),
      thinkingProofs: () => thinkingProofs(body),
      withoutThinking(drop) {
        const out = withoutThinking(body, drop);
        // The same body but for blocks removed: it validates as the original did.
        return out && { request: messagesFormat.validate(out.body), dropped: out.dropped };
      },
    };
  },
  inBandError: (message) =>
    formatSSE({ event: "error", data: JSON.stringify({ type: "error", error: { type: "api_error", message } }) }),
  terminalFrame: STOP,
  isTerminal: (piece) => piece.includes("event: message_stop\n") || piece.includes("event: error\n"),
  keepAlive: new TextEncoder().encode(formatSSE({ event: "ping", data: '{"type":"ping"}' })),
  renderError(err, requestId) {
    // "Overloaded" is 529 in this format, wherever it came from (docs/protocols.md §4.8).
    return {
      status: err.status === 503 ? 529 : err.status,
      body: { ...renderMessagesError(err), request_id: requestId },
    };
  },
  idHeaders: (requestId) => ({ "x-request-id": requestId, "request-id": requestId }),
  limitHeaders: anthropicLimitHeaders,
};
