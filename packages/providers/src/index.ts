/**
 * `@turnpike/providers`: stateless translation between the messages format (the pivot), chat
 * completions and generateContent — requests, replies, streams, errors, usage and token counts.
 * See README.md for the decisions (warning vs 400, stop sequences, interrupted streams).
 */

// Errors
export {
  CHAT_ERROR_TYPES,
  GatewayError,
  GUARDRAIL_BLOCKED,
  MESSAGES_ERROR_STATUS,
  MESSAGES_ERROR_TYPES,
  chatErrorStatus,
  gatewayErrorFromMessagesError,
  invalidRequest,
  messagesErrorStatus,
  messagesErrorTypeForStatus,
  renderChatError,
  renderMessagesError,
  type GatewayErrorInit,
  type Protocol,
} from "./errors.js";
export {
  clientPath,
  inClientTerms,
  keepOrigin,
  noteDerived,
  noteOrigin,
  type FieldNames,
} from "./client-paths.js";
export {
  chatStreamErrorToGatewayError,
  parseRetryDelaySeconds,
  upstreamErrorToGatewayError,
} from "./upstream-errors.js";
export { headerSafe, type Warning } from "./warnings.js";

// Usage
export {
  chatUsageToMessages,
  chatUsageToTotals,
  generateUsageToMessages,
  generateUsageToTotals,
  messagesUsageToChat,
  messagesUsageFields,
  messagesUsageToTotals,
  totalsToChatUsage,
  totalsToMessagesUsage,
  type OnUsage,
  type UsageTotals,
} from "./usage.js";

// Stop / finish reasons
export { mapChatFinishReason } from "./chat/map-chat-finish-reason.js";
export { mapStopReasonToChat } from "./chat/map-stop-reason-to-chat.js";
export { mapGenerateFinishReason } from "./generate/map-generate-finish-reason.js";
export { findStopSequence, type StopSequenceMatch } from "./stop-sequence.js";

// Requests
export {
  convertChatRequestToMessages,
  type ChatToMessagesOptions,
  type ChatToMessagesResult,
} from "./chat/convert-chat-request-to-messages.js";
export {
  convertMessagesRequestToChat,
  type MessagesToChatOptions,
  type MessagesToChatResult,
} from "./chat/convert-messages-request-to-chat.js";
export { SKIP_THOUGHT_SIGNATURE } from "./generate/convert-messages-to-generate-contents.js";
export {
  convertMessagesRequestToGenerate,
  type MessagesToGenerateOptions,
  type MessagesToGenerateResult,
} from "./generate/convert-messages-request-to-generate.js";
export {
  convertMessagesRequestToMessages,
  type MessagesToMessagesOptions,
  type MessagesToMessagesResult,
} from "./messages/convert-messages-request-to-messages.js";
export { placeCacheBreakpoints } from "./messages/place-cache-breakpoints.js";
export { restoreToolName, shortenToolName } from "./chat/tool-names.js";
export { generateToolName } from "./generate/generate-tool-name.js";

// Replies
export { convertChatResponseToMessages, type ChatReplyContext } from "./chat/convert-chat-response-to-messages.js";
export {
  convertMessagesResponseToChat,
  type MessagesReplyToChatContext,
} from "./chat/convert-messages-response-to-chat.js";
export {
  convertGenerateResponseToMessages,
  type GenerateReplyContext,
} from "./generate/convert-generate-response-to-messages.js";

// Streams
export {
  ChatToMessagesEventStream,
  ChatToMessagesMachine,
  chatStreamToMessagesEvents,
  type ChatStreamContext,
} from "./chat/chat-stream-to-messages-events.js";
export {
  GenerateToMessagesEventStream,
  GenerateToMessagesMachine,
  generateStreamToMessagesEvents,
  type GenerateStreamContext,
} from "./generate/generate-stream-to-messages-events.js";
export {
  MessagesSSEEventStream,
  MessagesSSEMachine,
  MessagesUsageAccumulator,
  messagesSSEToEvents,
  type MessagesSSEOptions,
} from "./messages/messages-sse-to-events.js";
export {
  MessagesToChatChunkStream,
  MessagesToChatMachine,
  messagesEventsToChatChunks,
  type ChatChunksContext,
} from "./chat/messages-events-to-chat-chunks.js";
export { encodeMessagesEvents, formatMessagesEvent } from "./messages/encode-messages-events.js";
export type { MessagesStreamContext } from "./messages/messages-event-builder.js";

// Generate protocol types
export {
  convertGenerateRequestToMessages,
  openApiToJsonSchema,
  type GenerateToMessagesOptions,
} from "./generate/convert-generate-request-to-messages.js";
export {
  convertMessagesResponseToGenerate,
  generateFinishReason,
  generateUsage,
} from "./generate/convert-messages-response-to-generate.js";
export {
  MessagesToGenerateMachine,
  type GenerateChunksContext,
} from "./generate/messages-events-to-generate-chunks.js";
export { generateErrorStatus, generateStatusWord, renderGenerateError } from "./generate/render-generate-error.js";
export { decodeThoughtToken, encodeThoughtToken, isThoughtToken, type ThoughtBlock } from "./generate/thought-token.js";
export type * from "./generate/types.js";

// Tokens and signatures
export { IMAGE_TOKENS, PDF_PAGE_TOKENS, countTextTokens, countTokens } from "./tokenize.js";
export { MemorySignatureStore, type SignatureStore } from "./signature-store.js";
export { EFFORT_TO_BUDGET, budgetToEffort } from "./thinking.js";

// Ids
export { randomId } from "./ids.js";

// Responses format
export {
  convertResponsesRequestToChat,
  namespacedName,
  type NamespacedName,
  type ResponsesToChatResult,
} from "./responses/convert-responses-request-to-chat.js";
export {
  convertMessagesResponseToResponses,
  responsesEnvelope,
  usageToResponses,
  responsesStatusOf,
  type ResponsesReplyContext,
} from "./responses/convert-messages-response-to-responses.js";
export { MessagesToResponsesMachine } from "./responses/messages-events-to-responses-events.js";

// Responses upstreams
export {
  convertMessagesRequestToResponses,
  type MessagesToResponsesRequestResult,
} from "./responses/convert-messages-request-to-responses.js";
export { convertResponsesResponseToChat } from "./responses/convert-responses-response-to-chat.js";
export { ResponsesToMessagesMachine } from "./responses/responses-stream-to-messages-events.js";
export { responsesUsageToChat, responsesUsageToTotals } from "./responses/responses-usage.js";
