import { formatMessagesEvent, renderMessagesError } from "@turnpike/providers";
import { validateMessagesRequest } from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";
import { anthropicLimitHeaders } from "./rate-limit-headers";
import { validationError } from "../vocabulary/client-errors";
import type { ClientFormat, ClientRequest, PivotEncoder } from "./client-format";
import type { Warning } from "@turnpike/providers";
import type { MessagesRequest, MessagesResponse, Protocol } from "@turnpike/schema";
import { thinkingProofs, withoutThinking } from "./messages-thinking";
import { dropUnknownKnobs, MESSAGES_OPEN, refuseUnknownContent } from "./open-rest";

const STOP = formatSSE({ event: "message_stop", data: '{"type":"message_stop"}' });

/**
 * A validated messages request. A class, so that its methods are shared: it is made for every
 * request, and an object of closures was seven cells more each time for the collector.
 */
class MessagesClientRequest implements ClientRequest {
  readonly model: string;
  readonly stream: boolean;
  readonly includeUsage = false;

  constructor(
    readonly body: Readonly<Record<string, unknown>>,
    private readonly request: MessagesRequest,
  ) {
    this.model = request.model;
    this.stream = request.stream === true;
  }

  toPivot(target: Protocol): { request: MessagesRequest; warnings: Warning[] } {
    const request = this.request;
    if (target === messagesFormat.passthroughProtocol) return { request, warnings: [] };
    // Toward another protocol: unknown content is refused, an unknown knob value dropped (open-rest.ts).
    refuseUnknownContent(request, MESSAGES_OPEN.content, target);
    const { body, warnings } = dropUnknownKnobs(request, MESSAGES_OPEN.knobs, target);
    return { request: body, warnings };
  }

  encodeReply(reply: MessagesResponse): unknown {
    return reply;
  }

  encoder(_model: string, write: (frame: string) => void): PivotEncoder {
    return { push: (ev) => write(formatMessagesEvent(ev)), end() {} };
  }

  thinkingProofs(): string[] {
    return thinkingProofs(this.body);
  }

  withoutThinking(drop: (proof: string) => boolean): { request: ClientRequest; dropped: number } | undefined {
    const out = withoutThinking(this.body, drop);
    // The same body but for blocks removed: it validates as the original did.
    return out && { request: messagesFormat.validate(out.body), dropped: out.dropped };
  }
}

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
    return new MessagesClientRequest(body, checked.value);
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
