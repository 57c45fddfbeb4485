/**
 * The error vocabularies of both formats, for the SDKs: the one table lives in
 * `@turnpike/schema` (its `error-types` entry, which loads no TypeBox; the gateway's providers
 * read the same table), so the SDKs and the gateway give the same answer for every status.
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
} from "@turnpike/schema/error-types";
