import { splitPieces } from "./build-reply-text";
import { countTextTokens } from "./count-text-tokens";
import { isObject, type JsonObject } from "./json-access";
import type { ReplyPlan } from "./plan-reply";
import type { Protocol } from "./simulator-options";

/**
 * The words of a gateway's request to continue a cut reply where the upstream has no prefill
 * (Turnpike's continuation, apps/gateway/src/dispatch/continuation-request.ts, says this).
 */
const CONTINUE_ASK = /previous reply was cut off/i;

/** A request to continue a partial reply: the body without the partial turn (and the ask), and the partial text. */
export interface Continuation {
  body: JsonObject;
  partial: string;
  /** Asked in words (no prefill): like a model, the reply repeats the partial's last words. */
  asked: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const b of content)
    if (isObject(b) && typeof b.text === "string" && b.thought !== true && b.type !== "thinking") out += b.text;
  return out;
}

/** The messages of a protocol's body: the list and the field it sits in. */
const LIST: Record<Protocol, string> = {
  messages: "messages",
  chat: "messages",
  responses: "input",
  generate: "contents",
};
const ASSISTANT: Record<Protocol, string> = {
  messages: "assistant",
  chat: "assistant",
  responses: "assistant",
  generate: "model",
};

/**
 * Reads a continuation request: a body whose turns end with the assistant's partial reply (a
 * prefill), or with it and a user's ask to continue. Undefined for any other body.
 */
export function readContinuation(protocol: Protocol, body: JsonObject): Continuation | undefined {
  const field = LIST[protocol];
  const list = body[field];
  if (!Array.isArray(list) || list.length < 2) return undefined;
  const last = list.at(-1);
  if (!isObject(last)) return undefined;
  if (last.role === ASSISTANT[protocol])
    return { body: { ...body, [field]: list.slice(0, -1) }, partial: textOf(last.content ?? last.parts), asked: false };
  const prev = list.at(-2);
  if (!isObject(prev) || prev.role !== ASSISTANT[protocol]) return undefined;
  if (!CONTINUE_ASK.test(textOf(last.content ?? last.parts))) return undefined;
  return { body: { ...body, [field]: list.slice(0, -2) }, partial: textOf(prev.content ?? prev.parts), asked: true };
}

/**
 * The rest of a planned reply after its partial: the text the partial has not said yet (asked in
 * words, from the start of its last three words, as a model restating where it was), the tool
 * calls as planned, no thinking. A partial that is not the start of the reply leaves it whole.
 */
export function continuePlan(plan: ReplyPlan, c: Continuation, chunks: number): ReplyPlan {
  const full = plan.text.join("");
  const said = c.partial.trimEnd();
  let from = full.startsWith(said) ? said.length : 0;
  if (c.asked && from > 0) {
    const words = [...said.matchAll(/\S+/g)];
    from = words.length >= 3 ? words.at(-3)!.index! : 0;
  }
  const text = full.slice(from);
  const toolTokens = plan.toolCalls.reduce((n, t) => n + countTextTokens(t.json), 0);
  const { running: _memo, ...rest } = plan;
  return {
    ...rest,
    thinking: [],
    thinkingTokens: 0,
    text: splitPieces(text, chunks),
    outputTokens: Math.max(1, countTextTokens(text) + toolTokens),
  };
}
