import type { Protocol } from "@turnpike/schema";
import { chatProtocol } from "./chat";
import { generateProtocol } from "./generate";
import { messagesProtocol } from "./messages";
import { responsesProtocol } from "./responses";
import type { UpstreamProtocol } from "./upstream-protocol";

/** Every upstream protocol, by name: a new protocol is an adapter file and one line here. */
export const PROTOCOLS: Record<Protocol, UpstreamProtocol> = {
  messages: messagesProtocol,
  chat: chatProtocol,
  generate: generateProtocol,
  responses: responsesProtocol,
};

export type { PassthroughOptions, UpstreamProtocol, UpstreamRequest } from "./upstream-protocol";
export type { Target } from "../vocabulary/target";
