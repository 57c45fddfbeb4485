import type { Protocol } from "@turnpike/schema";
import { chatProtocol } from "./chat/chat-protocol";
import { generateProtocol } from "./generate/generate-protocol";
import { messagesProtocol } from "./messages/messages-protocol";
import { responsesProtocol } from "./responses/responses-protocol";
import type { UpstreamProtocol } from "./upstream-protocol";

/** Every upstream protocol, by name: a new protocol is an adapter file and one line here. */
export const PROTOCOLS: Record<Protocol, UpstreamProtocol> = {
  messages: messagesProtocol,
  chat: chatProtocol,
  generate: generateProtocol,
  responses: responsesProtocol,
};

export type { PassthroughOptions, Target, UpstreamProtocol, UpstreamRequest } from "./upstream-protocol";
export type { EmbeddingsCall, EmbeddingsInput, EmbeddingsReply } from "./upstream-protocol";
export {
  type UpstreamAnswer,
  type UpstreamBatchApi,
  UpstreamBatchError,
  type UpstreamLine,
} from "./vendor-batch";

/** The protocols with an embeddings call, by name (the catalog checks an embedding row against them). */
export const EMBEDDING_PROTOCOLS: readonly Protocol[] = Object.values(PROTOCOLS)
  .filter((p) => p.embeddings !== undefined)
  .map((p) => p.id);
