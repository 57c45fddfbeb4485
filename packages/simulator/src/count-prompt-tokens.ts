import { responsesAsChat } from "./responses-as-chat";
import { countTextTokens } from "./count-text-tokens";
import { arrayOf, isObject, stringOf, type JsonObject } from "./json-access";
import type { Protocol } from "./simulator-options";

/** Tokens added for each message / content turn, and once for a non-empty system prompt. */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** Flat count for each image, document, audio or file part (their bytes are never tokenized). */
export const MEDIA_TOKENS = 85;

const T = countTextTokens;

/** Tool definitions count as name + description + the JSON of the parameter schema. */
function toolTokens(name: unknown, description: unknown, schema: unknown): number {
  return T(stringOf(name) ?? "") + T(stringOf(description) ?? "") + T(JSON.stringify(schema ?? {}));
}

/** Text of a tool result's content: a string, or the text of its text parts. */
export function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  let out = "";
  for (const p of arrayOf(content)) if (isObject(p) && typeof p.text === "string") out += p.text;
  return out;
}

function systemTokens(tokens: number): number {
  return tokens > 0 ? tokens + MESSAGE_OVERHEAD_TOKENS : 0;
}

function messagesBlockTokens(b: unknown): number {
  if (typeof b === "string") return T(b);
  if (!isObject(b)) return 0;
  switch (b.type) {
    case "text":
      return T(stringOf(b.text) ?? "");
    case "tool_use":
      return T(stringOf(b.name) ?? "") + T(JSON.stringify(b.input ?? {}));
    case "tool_result":
      return T(resultText(b.content));
    case "thinking":
      return T(stringOf(b.thinking) ?? "");
    case "redacted_thinking":
      return 0;
    default:
      return MEDIA_TOKENS;
  }
}

function messagesPrompt(body: JsonObject): number {
  let n = 0;
  const system = body.system;
  n += systemTokens(
    typeof system === "string" ? T(system) : arrayOf(system).reduce<number>((s, b) => s + messagesBlockTokens(b), 0),
  );
  for (const m of arrayOf(body.messages)) {
    if (!isObject(m)) continue;
    n += MESSAGE_OVERHEAD_TOKENS;
    if (typeof m.content === "string") n += T(m.content);
    else for (const b of arrayOf(m.content)) n += messagesBlockTokens(b);
  }
  for (const t of arrayOf(body.tools)) if (isObject(t)) n += toolTokens(t.name, t.description, t.input_schema);
  return n;
}

function chatPartTokens(p: unknown): number {
  if (!isObject(p)) return 0;
  if (p.type === "text") return T(stringOf(p.text) ?? "");
  if (p.type === "refusal") return T(stringOf(p.refusal) ?? "");
  return MEDIA_TOKENS;
}

function chatPrompt(body: JsonObject): number {
  let n = 0;
  for (const m of arrayOf(body.messages)) {
    if (!isObject(m)) continue;
    n += MESSAGE_OVERHEAD_TOKENS;
    if (typeof m.content === "string") n += T(m.content);
    else for (const p of arrayOf(m.content)) n += chatPartTokens(p);
    if (typeof m.reasoning_content === "string") n += T(m.reasoning_content);
    for (const c of arrayOf(m.tool_calls)) {
      const f = isObject(c) && isObject(c.function) ? c.function : undefined;
      if (f) n += T(stringOf(f.name) ?? "") + T(stringOf(f.arguments) ?? "");
    }
  }
  for (const t of arrayOf(body.tools)) {
    const f = isObject(t) && isObject(t.function) ? t.function : undefined;
    if (f) n += toolTokens(f.name, f.description, f.parameters);
  }
  return n;
}

/** A functionResponse counts like a tool result: its `output` (or `content`) string, else its JSON. */
export function functionResponseText(response: unknown): string {
  if (isObject(response)) {
    if (typeof response.output === "string") return response.output;
    if (typeof response.content === "string") return response.content;
  }
  return JSON.stringify(response ?? {});
}

function generatePartTokens(p: unknown): number {
  if (!isObject(p)) return 0;
  if (typeof p.text === "string") return T(p.text);
  if (isObject(p.functionCall))
    return T(stringOf(p.functionCall.name) ?? "") + T(JSON.stringify(p.functionCall.args ?? {}));
  if (isObject(p.functionResponse)) return T(functionResponseText(p.functionResponse.response));
  return MEDIA_TOKENS;
}

function generatePrompt(body: JsonObject): number {
  // countTokens may wrap the request: {generateContentRequest: {model, contents, ...}}.
  const req = isObject(body.generateContentRequest) ? body.generateContentRequest : body;
  let n = 0;
  const si = req.systemInstruction;
  if (isObject(si)) n += systemTokens(arrayOf(si.parts).reduce<number>((s, p) => s + generatePartTokens(p), 0));
  for (const c of arrayOf(req.contents)) {
    if (!isObject(c)) continue;
    n += MESSAGE_OVERHEAD_TOKENS;
    for (const p of arrayOf(c.parts)) n += generatePartTokens(p);
  }
  for (const t of arrayOf(req.tools)) {
    if (!isObject(t)) continue;
    for (const d of arrayOf(t.functionDeclarations)) {
      if (isObject(d)) n += toolTokens(d.name, d.description, d.parameters ?? d.parametersJsonSchema);
    }
  }
  return n;
}

/**
 * Input tokens the simulator reports for a request body of the given protocol — the same number in
 * the JSON reply, the stream and the count-tokens endpoints. The formula (README "Token counting"):
 * o200k_base tokens of every text (system, message text, tool-call names and argument JSON, tool
 * results, thinking) + {@link MESSAGE_OVERHEAD_TOKENS} per message and per non-empty system prompt
 * + {@link MEDIA_TOKENS} per media part + name, description and schema JSON of each tool.
 *
 * @example
 * countPromptTokens("messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] })
 * // → 3 + tokens("Hi") = 4
 */
export function countPromptTokens(protocol: Protocol, body: unknown): number {
  if (!isObject(body)) return 0;
  switch (protocol) {
    case "messages":
      return messagesPrompt(body);
    case "chat":
      return chatPrompt(body);
    case "generate":
      return generatePrompt(body);
    case "responses":
      // The same count as the chat request it equals.
      return chatPrompt(responsesAsChat(body));
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** Turns counted between two calls of `pause` in {@link countPromptTokensSliced}. */
const TURNS_PER_PIECE = 256;

/**
 * {@link countPromptTokens} of a large body, its conversation counted a piece of turns at a time
 * with `pause` awaited between pieces (the simulator may share its event loop with the gateway:
 * 16,000 short turns counted at once held it 20-55 ms). The same number: each formula is the
 * count of the body without its turns plus each turn's own (a Responses body is first read as the
 * chat request it equals, a step of its own).
 */
export async function countPromptTokensSliced(
  protocol: Protocol,
  body: unknown,
  pause: () => Promise<void>,
): Promise<number> {
  if (!isObject(body)) return 0;
  if (protocol === "responses") {
    const chat = responsesAsChat(body);
    await pause();
    return countPromptTokensSliced("chat", chat, pause);
  }
  // countTokens may wrap a generateContent request (its count is of the inner one).
  const req = protocol === "generate" && isObject(body.generateContentRequest) ? body.generateContentRequest : body;
  const field = protocol === "generate" ? "contents" : "messages";
  const turns = arrayOf(req[field]);
  let n = countPromptTokens(protocol, { ...req, [field]: [] });
  for (let i = 0; i < turns.length; i += TURNS_PER_PIECE) {
    await pause();
    n += countPromptTokens(protocol, { [field]: turns.slice(i, i + TURNS_PER_PIECE) });
  }
  return n;
}
