/**
 * The pivot → a messages-format upstream request. A chat client's pivot is already valid for a
 * messages upstream; this step removes what only Turnpike reads and what the upstream would
 * reject in a history that came from another vendor (docs/protocols.md §4.2, §4.9 traps 12–13):
 * - the `turnpike` extension field;
 * - thinking blocks without a signature (they came from a chat upstream's `reasoning_content`
 *   or from a generateContent thought and cannot be verified);
 * - all thinking blocks when the request does not turn thinking on ("thinking present while
 *   disabled → 400", forgecode#1853); an assistant turn left empty is dropped and its
 *   neighbours merged;
 * - `top_p` when `temperature` is also set;
 * - `thinking: enabled` when `tool_choice` forces a tool ("Thinking may not be enabled when
 *   tool_choice forces tool use");
 * - a root `anyOf` / `oneOf` / `allOf` in a tool's `input_schema` (root-object-schema.ts).
 * Each change is a warning.
 */
import type { ContentBlockParam, MessageParam, MessagesRequest } from "@turnpike/schema";
import { Warnings, type Warning } from "../warnings.js";
import { rootObjectSchema } from "./root-object-schema.js";

export interface MessagesToMessagesOptions {
  /** The model id the upstream knows (default: unchanged). */
  upstreamModel?: string | undefined;
}

export interface MessagesToMessagesResult {
  body: MessagesRequest;
  warnings: Warning[];
}

/**
 * @example
 * ```ts
 * const { body } = convertMessagesRequestToMessages(pivot, { upstreamModel: "alpha-sonnet-4-6" });
 * ```
 */
export function convertMessagesRequestToMessages(
  req: MessagesRequest,
  opts: MessagesToMessagesOptions = {},
): MessagesToMessagesResult {
  const w = new Warnings();
  const { turnpike: _internal, ...rest } = req;
  const body: MessagesRequest = { ...rest };
  if (opts.upstreamModel) body.model = opts.upstreamModel;

  if (body.temperature !== undefined && body.top_p !== undefined) {
    w.add("top_p", "dropped: this upstream does not accept temperature and top_p together; temperature was kept");
    delete body.top_p;
  }
  const forced = body.tool_choice?.type === "any" || body.tool_choice?.type === "tool";
  if (body.thinking?.type === "enabled" && forced) {
    w.add("thinking", "dropped: this upstream cannot think while tool_choice forces a tool call");
    delete body.thinking;
  }

  if (body.tools?.some((t) => "input_schema" in t && rootObjectSchema(t.input_schema).schema !== t.input_schema)) {
    body.tools = body.tools.map((t, i) => {
      if (!("input_schema" in t)) return t;
      const root = rootObjectSchema(t.input_schema);
      if (root.schema === t.input_schema) return t;
      if (root.lost) w.add(`tools[${i}].input_schema`, `${root.lost}: this upstream takes only one object there`);
      return { ...t, input_schema: root.schema as typeof t.input_schema }; // an object schema: rootObjectSchema sets type "object"
    });
  }

  const thinkingOn = body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
  let changed = false;
  const messages: MessageParam[] = [];
  for (const m of body.messages) {
    if (m.role !== "assistant" || typeof m.content === "string") {
      messages.push(m);
      continue;
    }
    const kept = m.content.filter((b) => {
      if (b.type === "thinking" && (!thinkingOn || b.signature === "")) {
        w.add(
          "thinking",
          thinkingOn
            ? "unsigned thinking blocks (from another vendor) were removed from the history"
            : "thinking blocks were removed from the history because thinking is off",
        );
        return false;
      }
      if (b.type === "redacted_thinking" && !thinkingOn) {
        w.add("thinking", "thinking blocks were removed from the history because thinking is off");
        return false;
      }
      return true;
    });
    if (kept.length !== m.content.length) changed = true;
    if (kept.length > 0) messages.push({ role: m.role, content: kept });
  }
  if (changed) body.messages = mergeSameRole(messages);
  return { body, warnings: w.list };
}

function asBlocks(content: string | ContentBlockParam[]): ContentBlockParam[] {
  return typeof content === "string" ? (content ? [{ type: "text", text: content }] : []) : content;
}

function mergeSameRole(messages: MessageParam[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content = [...asBlocks(last.content), ...asBlocks(m.content)];
    else out.push({ ...m });
  }
  return out;
}
