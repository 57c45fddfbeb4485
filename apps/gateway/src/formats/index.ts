import type { ClientFormat } from "./client-format";
import type { Format } from "../vocabulary/format";
import { chatFormat } from "./chat";
import { generateFormat } from "./generate";
import { messagesFormat } from "./messages";
import { responsesFormat } from "./responses";

/** Every client format, by name: a new format is an adapter file and one line here. */
export const FORMATS: Record<Format, ClientFormat> = {
  messages: messagesFormat,
  chat: chatFormat,
  responses: responsesFormat,
  generate: generateFormat,
};

const ALL = Object.values(FORMATS);

/** The format a call's headers claim, else the chat format (the one that claims nothing). */
export function formatOfHeaders(headers: Headers): ClientFormat {
  return ALL.find((f) => f.claims(headers)) ?? chatFormat;
}

/** The format of a route by its path prefix, else by its headers. */
export function formatOfPath(path: string, headers: Headers): ClientFormat {
  return ALL.find((f) => path.startsWith(f.pathPrefix)) ?? formatOfHeaders(headers);
}

export type { ClientFormat, ClientRequest, PivotEncoder } from "./client-format";
export type { Format } from "../vocabulary/format";
