/**
 * The error vocabularies of both formats, for the SDKs: the one table lives in
 * `../error-types.ts` (also exported from `@turnpike/schema`, where the gateway's providers read
 * it), so the SDKs and the gateway give the same answer for every status.
 */
export {
  CHAT_ERROR_BY_STATUS,
  MESSAGES_ERROR_STATUS_BY_TYPE,
  MESSAGES_ERROR_TYPE_BY_STATUS,
  STREAM_ERROR_STATUS,
  chatClientStatus,
  chatErrorType,
  messagesClientStatus,
  messagesErrorType,
  type ChatErrorKind,
} from "../error-types.js";
