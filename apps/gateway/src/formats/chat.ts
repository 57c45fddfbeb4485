import {
  MessagesToChatMachine,
  convertChatRequestToMessages,
  convertMessagesResponseToChat,
  renderChatError,
} from "@turnpike/providers";
import { validateChatRequest } from "@turnpike/schema";
import { formatSSE, formatSSEComment } from "@turnpike/schema/sse";
import { chatLimitHeaders } from "./rate-limit-headers";
import { validationError } from "../vocabulary/client-errors";
import type { ClientFormat } from "./client-format";
import { CHAT_OPEN, dropUnknownKnobs, refuseUnknownContent, withoutUnknownContent } from "./open-rest";

/**
 * The output cap a translated chat request gets when the client sends none: the messages
 * protocol requires one (docs/protocols.md §1.2).
 */
export const DEFAULT_MAX_TOKENS = 4096;

const DONE = formatSSE({ data: "[DONE]" });

/** The chat completions format (`POST /v1/chat/completions`). */
export const chatFormat: ClientFormat = {
  id: "chat",
  endpoint: "chat",
  pathPrefix: "/v1/chat/",
  passthroughProtocol: "chat",
  inputAtStart: false,
  // The default format of calls that do not say: it claims nothing by its headers.
  claims: () => false,
  validate(body) {
    const checked = validateChatRequest(body);
    if (!checked.ok) throw validationError(checked.issues);
    const request = checked.value;
    const includeUsage = request.stream_options?.include_usage === true;
    // A paid tier the call was sent at, for the reply's `service_tier` (dispatch/service-tier.ts).
    let tier: string | undefined;
    return {
      model: request.model,
      stream: request.stream === true,
      body,
      includeUsage,
      toPivot(target) {
        const opts = { defaultMaxTokens: DEFAULT_MAX_TOKENS, target };
        // Toward a chat upstream the body passes through and this pivot is only counted: parts of
        // unknown type are left out of the count. Toward another protocol they are refused, and an
        // unknown knob value dropped with a warning (open-rest.ts).
        if (target === chatFormat.passthroughProtocol)
          return convertChatRequestToMessages(withoutUnknownContent(request, CHAT_OPEN.content), opts);
        refuseUnknownContent(request, CHAT_OPEN.content, target);
        const open = dropUnknownKnobs(request, CHAT_OPEN.knobs, target);
        const pivot = convertChatRequestToMessages(open.body, opts);
        return { request: pivot.request, warnings: open.warnings.concat(pivot.warnings) };
      },
      encodeReply(reply, model) {
        const out = convertMessagesResponseToChat(reply, { model });
        if (tier) out.service_tier = tier;
        return out;
      },
      servedAt(t) {
        tier = t;
      },
      encoder: (model, write) => new MessagesToChatMachine({ model, includeUsage }, write),
    };
  },
  inBandError: (message) =>
    formatSSE({ data: JSON.stringify({ error: { message, type: "server_error", param: null, code: null } }) }) + DONE,
  terminalFrame: DONE,
  isTerminal: (piece) => piece.includes("data: [DONE]"),
  keepAlive: new TextEncoder().encode(formatSSEComment("keep-alive")),
  renderError(err) {
    // This format has no 529 ("overloaded" is a 503) and no 402 (a spent quota is a 429
    // `insufficient_quota`): docs/protocols.md §4.8.
    const status = err.status === 529 ? 503 : err.status === 402 ? 429 : err.status;
    return { status, body: renderChatError(err) };
  },
  idHeaders: (requestId) => ({ "x-request-id": requestId }),
  limitHeaders: chatLimitHeaders,
};
