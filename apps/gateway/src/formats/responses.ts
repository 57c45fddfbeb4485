import {
  MessagesToResponsesMachine,
  convertChatRequestToMessages,
  convertMessagesResponseToResponses,
  convertResponsesRequestToChat,
  randomId,
  renderChatError,
  type NamespacedName,
} from "@turnpike/providers";
import { RESPONSES_TERMINAL_EVENTS, validateResponsesRequest } from "@turnpike/schema";
import { formatSSE, formatSSEComment } from "@turnpike/schema/sse";
import { chatLimitHeaders } from "../limits/rate-limit-headers";
import { validationError } from "../pipeline/read-body";
import { DEFAULT_MAX_TOKENS } from "./chat";
import type { ClientFormat } from "./client-format";

const TERMINAL_LINES = RESPONSES_TERMINAL_EVENTS.map((e) => `event: ${e}\n`);

/**
 * The Responses format (`POST /v1/responses`). Requests reach the pivot through the chat
 * converter (decisions/0006-responses-through-chat.md); replies and streams are written from the
 * pivot by the Responses encoders. No upstream speaks it yet, so nothing passes through.
 */
export const responsesFormat: ClientFormat = {
  id: "responses",
  endpoint: "responses",
  pathPrefix: "/v1/responses",
  passthroughProtocol: undefined,
  inputAtStart: false,
  claims: () => false,
  validate(body) {
    const checked = validateResponsesRequest(body);
    if (!checked.ok) throw validationError(checked.issues);
    const request = checked.value;
    // One identity for the reply, whether it is written as JSON or as a stream.
    const id = randomId("resp_");
    const createdAt = Math.floor(Date.now() / 1000);
    // Names of namespaced functions as offered upstream → as the client knows them.
    let namespaced: Record<string, NamespacedName> = {};
    return {
      model: request.model,
      stream: request.stream === true,
      body,
      includeUsage: true,
      toPivot(target) {
        const chat = convertResponsesRequestToChat(request);
        namespaced = chat.namespaced;
        const pivot = convertChatRequestToMessages(chat.request, { defaultMaxTokens: DEFAULT_MAX_TOKENS, target });
        return { request: pivot.request, warnings: chat.warnings.concat(pivot.warnings) };
      },
      encodeReply: (reply, model) => convertMessagesResponseToResponses(reply, { model, request, id, createdAt, namespaced }),
      encoder: (model, write) => new MessagesToResponsesMachine({ model, request, id, createdAt, namespaced }, write),
    };
  },
  inBandError: (message) =>
    formatSSE({ event: "error", data: JSON.stringify({ type: "error", code: "server_error", message, param: null, sequence_number: 0 }) }),
  // Only a passthrough completes a stream with this frame, and no upstream passes through to this format.
  terminalFrame: "",
  isTerminal: (piece) => TERMINAL_LINES.some((line) => piece.includes(line)) || piece.includes("event: error\n"),
  keepAlive: new TextEncoder().encode(formatSSEComment("keep-alive")),
  renderError(err) {
    // The chat format's envelope and statuses: no 529 ("overloaded" is a 503) and no 402 (a spent
    // quota is a 429 `insufficient_quota`), docs/protocols.md §4.8.
    const status = err.status === 529 ? 503 : err.status === 402 ? 429 : err.status;
    return { status, body: renderChatError(err) };
  },
  idHeaders: (requestId) => ({ "x-request-id": requestId }),
  limitHeaders: chatLimitHeaders,
};
