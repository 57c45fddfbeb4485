import type { Protocol } from "@turnpike/providers";
import { chatProtocol } from "./chat";
import { generateProtocol } from "./generate";
import { messagesProtocol } from "./messages";
import type { UpstreamProtocol } from "./upstream-protocol";

/** Every upstream protocol, by name: a new protocol is an adapter file and one line here. */
export const PROTOCOLS: Record<Protocol, UpstreamProtocol> = {
  messages: messagesProtocol,
  chat: chatProtocol,
  generate: generateProtocol,
};

/** The protocol names a config file may use (the registry's keys). */
export const PROTOCOL_NAMES = Object.keys(PROTOCOLS) as Protocol[]; // the keys of a Record<Protocol, …>

export function isProtocol(name: unknown): name is Protocol {
  return typeof name === "string" && Object.hasOwn(PROTOCOLS, name);
}

export type { PassthroughOptions, Target, UpstreamProtocol, UpstreamRequest } from "./upstream-protocol";
