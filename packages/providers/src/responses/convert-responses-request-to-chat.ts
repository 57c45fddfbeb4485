/**
 * A Responses request in chat-completions terms. The Responses format's input items map one to
 * one onto chat messages for everything both formats share (messages, function calls and their
 * outputs, function tools, the knobs), so a Responses request reaches the pivot through the chat
 * converter and is held to exactly the same rules per upstream (decisions/0006). What only the
 * Responses format has is decided here: a 400 naming the field, or a warning.
 */
import type {
  ChatAssistantMessage,
  ChatContentPart,
  ChatMessage,
  ChatRequest,
  ChatTool,
  ChatToolCall,
  ResponsesInputItem,
  ResponsesInputPart,
  ResponsesRequest,
} from "@turnpike/schema";
import { noteOrigin } from "../client-paths.js";
import { invalidRequest } from "../errors.js";
import { Warnings, type Warning } from "../warnings.js";

/** A function of a namespace tool: its own name and its namespace's. */
export interface NamespacedName {
  namespace: string;
  name: string;
}

export interface ResponsesToChatResult {
  request: ChatRequest;
  warnings: Warning[];
  /**
   * The names namespaced functions are offered under upstream (`<namespace>__<name>`) → their
   * namespace and own name, to map the calls of a reply back. Empty without namespace tools.
   */
  namespaced: Record<string, NamespacedName>;
  /**
   * The custom (free-form) tools, offered upstream as function tools of one string argument
   * (`input`): a call of one of these names is a `custom_tool_call` in the reply.
   */
  custom: Record<string, true>;
}

/** The one argument a custom tool's free-form input travels in, where the upstream has only function tools. */
export const CUSTOM_TOOL_ARGUMENT = "input";

/** The flat name a namespaced function is offered under: unambiguous, and a valid function name. */
export function namespacedName(namespace: string, name: string): string {
  return `${namespace}__${name}`;
}

/** The input item types this converter reads. */
const READ_ITEMS = new Set([
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "reasoning",
]);

/** Fields this converter reads; any other top-level field gets a warning. */
const HANDLED = new Set<string>([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "temperature",
  "top_p",
  "text",
  "reasoning",
  "metadata",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "include",
  "truncation",
  "store",
  "previous_response_id",
  "stream",
  "presence_penalty",
  "frequency_penalty",
  "service_tier",
  "top_logprobs",
  "max_tool_calls",
  "background",
]);

/** Responses-only fields with no counterpart upstream, dropped with a warning. */
const NOT_CARRIED: Record<string, string> = {
  include: "extra output fields are not produced by this upstream",
  truncation: "Turnpike does not truncate a conversation; a prompt over the context window is refused by the upstream",
  top_logprobs: "log probabilities are not produced by this upstream",
  max_tool_calls: "this upstream has no cap on tool calls; the model may call as many as it chooses",
  background: "the call runs while the client waits; the response says `background: false`",
};

/** A value that asks for nothing (`background: false`, `top_logprobs: 0`): no warning for what is not carried. */
function isUnset(v: unknown): boolean {
  return v == null || v === false || v === 0;
}

function partsToChat(parts: readonly ResponsesInputPart[], at: string, w: Warnings): ChatContentPart[] {
  const out: ChatContentPart[] = [];
  parts.forEach((p, i) => {
    const where = `${at}[${i}]`;
    switch (p.type) {
      case "input_text":
      case "output_text":
        out.push({ type: "text", text: p.text });
        break;
      case "input_image":
        if (!p.image_url)
          throw invalidRequest(
            where,
            "an image must be given as image_url (a data: URL or an http(s) URL); file ids belong to one vendor",
          );
        out.push({
          type: "image_url",
          image_url: {
            url: p.image_url,
            ...(p.detail === "low" || p.detail === "high" || p.detail === "auto" ? { detail: p.detail } : {}),
          },
        });
        noteOrigin(out.at(-1)!, where, { image_url: "image_url", "image_url.url": "image_url" }); // pushed above
        break;
      case "input_file":
        if (p.file_url !== undefined)
          throw invalidRequest(where, "file_url is not supported; send the file as file_data (a base64 data: URL)");
        out.push({
          type: "file",
          file: {
            ...(p.file_data !== undefined ? { file_data: p.file_data } : {}),
            ...(p.file_id ? { file_id: p.file_id } : {}),
            ...(p.filename !== undefined ? { filename: p.filename } : {}),
          },
        });
        noteOrigin(out.at(-1)!, where, { file: "", "file.file_data": "file_data", "file.file_id": "file_id" }); // pushed above
        break;
      case "refusal":
        w.add(where, "an earlier refusal is replayed as text");
        out.push({ type: "text", text: p.refusal });
        break;
      default: {
        const never: never = p;
        throw invalidRequest(where, `unknown content part ${JSON.stringify(never)}`);
      }
    }
  });
  return out;
}

/** Text of parts that must be plain text (system and assistant turns). */
function textOf(content: string | readonly ResponsesInputPart[], at: string, w: Warnings): string {
  if (typeof content === "string") return content;
  return partsToChat(content, at, w)
    .map((p, i) => {
      if (p.type === "text") return p.text;
      throw invalidRequest(`${at}[${i}]`, "only text parts are allowed in this message");
    })
    .join("");
}

/** The assistant message that function calls attach to: the previous one, if the last message is it. */
function assistantTail(messages: ChatMessage[]): ChatAssistantMessage {
  const last = messages.at(-1);
  if (last?.role === "assistant" && !last.tool_calls?.some((c) => c.type !== "function")) return last;
  const fresh: ChatAssistantMessage = { role: "assistant", content: null };
  messages.push(fresh);
  return fresh;
}

/** A chat tool call's fields as the Responses item it came from names them (client-paths.ts). */
const CALL_FIELDS = { id: "call_id", "function.name": "name", "function.arguments": "arguments" };

function itemsToChat(items: readonly ResponsesInputItem[], w: Warnings): ChatMessage[] {
  const messages: ChatMessage[] = [];
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    const type = (item as { type?: unknown }).type ?? "message"; // a vendor's own item types reach here too (formats/responses.ts)
    if (!READ_ITEMS.has(String(type))) {
      w.add(at, `"${String(type)}" items are a Responses vendor's own; not replayed to this upstream`);
      return;
    }
    if (item.type === "function_call") {
      const name = item.namespace ? namespacedName(item.namespace, item.name) : item.name;
      const call: ChatToolCall = { id: item.call_id, type: "function", function: { name, arguments: item.arguments } };
      noteOrigin(call, at, CALL_FIELDS);
      const a = assistantTail(messages);
      a.tool_calls = [...(a.tool_calls ?? []), call];
      return;
    }
    if (item.type === "custom_tool_call") {
      // Free-form input as the one string argument the tool was offered with (toolsToChat).
      const call: ChatToolCall = {
        id: item.call_id,
        type: "function",
        function: { name: item.name, arguments: JSON.stringify({ [CUSTOM_TOOL_ARGUMENT]: item.input }) },
      };
      noteOrigin(call, at, { ...CALL_FIELDS, "function.arguments": "input" });
      const a = assistantTail(messages);
      a.tool_calls = [...(a.tool_calls ?? []), call];
      return;
    }
    if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      const content = typeof item.output === "string" ? item.output : textOf(item.output, `${at}.output`, w);
      const message: ChatMessage = { role: "tool", tool_call_id: item.call_id, content };
      noteOrigin(message, at, { tool_call_id: "call_id", content: "output" });
      messages.push(message);
      return;
    }
    if (item.type === "reasoning") {
      // A reasoning item is the vendor's own (its encrypted content opens only there); a summary
      // is not the reasoning itself. Neither can be replayed to another upstream as thinking.
      w.add(at, "reasoning items are not replayed to this upstream");
      return;
    }
    switch (item.role) {
      case "system":
      case "developer": {
        const message: ChatMessage = { role: item.role, content: textOf(item.content, `${at}.content`, w) };
        noteOrigin(message, at);
        messages.push(message);
        return;
      }
      case "user": {
        const message: ChatMessage = {
          role: "user",
          content: typeof item.content === "string" ? item.content : partsToChat(item.content, `${at}.content`, w),
        };
        noteOrigin(message, at);
        messages.push(message);
        return;
      }
      case "assistant": {
        const text = textOf(item.content, `${at}.content`, w);
        const last = messages.at(-1);
        // Output text after a function call of the same turn stays in that turn.
        if (last?.role === "assistant" && !last.tool_calls && typeof last.content === "string") last.content += text;
        else messages.push({ role: "assistant", content: text });
        return;
      }
      default: {
        const never: never = item.role;
        throw invalidRequest(`${at}.role`, `unknown role ${JSON.stringify(never)}`);
      }
    }
  });
  return messages;
}

/** A function tool (`{type: "function", name, description?, parameters?, strict?}`) in chat terms, under `name`. */
function functionTool(t: Record<string, unknown>, name: string, at: string): ChatTool {
  if (typeof t.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.name))
    throw invalidRequest(`${at}.name`, "must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -");
  const parameters =
    typeof t.parameters === "object" && t.parameters !== null ? (t.parameters as Record<string, unknown>) : undefined; // an object: checked on the left
  const fn = {
    name,
    ...(typeof t.description === "string" ? { description: t.description } : {}),
    ...(parameters ? { parameters } : {}),
    ...(typeof t.strict === "boolean" ? { strict: t.strict } : {}),
  };
  noteOrigin(fn, at);
  return { type: "function", function: fn };
}

/**
 * A custom (free-form) tool as a function tool of one string argument. Its format (a grammar, or
 * plain text) cannot be enforced by a function tool; it is put in the description for the model.
 */
function customTool(t: Record<string, unknown>, at: string): ChatTool {
  if (typeof t.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.name))
    throw invalidRequest(`${at}.name`, "must be 1 to 64 characters of a-z, A-Z, 0-9, _ or -");
  const format = typeof t.format === "object" && t.format !== null ? (t.format as Record<string, unknown>) : undefined; // an object: checked on the left
  const grammar =
    format?.type === "grammar" && typeof format.definition === "string"
      ? `\n\nThe ${CUSTOM_TOOL_ARGUMENT} must follow this ${typeof format.syntax === "string" ? format.syntax : ""} grammar:\n${format.definition}`
      : "";
  const description = `${typeof t.description === "string" ? t.description : ""}${grammar}`.trim();
  return {
    type: "function",
    function: {
      name: t.name,
      ...(description ? { description } : {}),
      parameters: {
        type: "object",
        properties: {
          [CUSTOM_TOOL_ARGUMENT]: {
            type: "string",
            description: "The tool's whole input, as free-form text (not JSON).",
          },
        },
        required: [CUSTOM_TOOL_ARGUMENT],
        additionalProperties: false,
      },
    },
  };
}

function toolsToChat(
  tools: ResponsesRequest["tools"],
  w: Warnings,
  namespaced: Record<string, NamespacedName>,
  custom: Record<string, true>,
): ChatTool[] | undefined {
  if (!tools?.length) return undefined;
  const out: ChatTool[] = [];
  tools.forEach((raw, i) => {
    const t: Record<string, unknown> = raw;
    if (t.type === "function") {
      out.push(functionTool(t, String(t.name), `tools[${i}]`));
      return;
    }
    if (t.type === "namespace") {
      // A named group of functions: each is offered under `<namespace>__<name>` and its calls are
      // mapped back to the namespace and the function's own name.
      if (typeof t.name !== "string" || !/^[a-zA-Z0-9_-]+$/.test(t.name))
        throw invalidRequest(`tools[${i}].name`, "a namespace name is a-z, A-Z, 0-9, _ or -");
      const inner = Array.isArray(t.tools) ? t.tools : [];
      inner.forEach((fn: unknown, j) => {
        const at = `tools[${i}].tools[${j}]`;
        if (typeof fn !== "object" || fn === null || (fn as { type?: unknown }).type !== "function") {
          throw invalidRequest(`${at}.type`, "only function tools are supported inside a namespace");
        }
        const f = fn as Record<string, unknown>; // an object of type "function": checked above
        const flat = namespacedName(String(t.name), String(f.name));
        namespaced[flat] = { namespace: String(t.name), name: String(f.name) };
        out.push(functionTool(f, flat, at));
      });
      return;
    }
    if (t.type === "custom") {
      // Every translated upstream offers function tools; the call comes back as a custom_tool_call.
      const tool = customTool(t, `tools[${i}]`);
      if (tool.type === "function") custom[tool.function.name] = true;
      out.push(tool);
      return;
    }
    // A built-in tool (web_search, file_search, code_interpreter, …) runs at the vendor that
    // offers it; no upstream reached through translation can run it. The call still succeeds.
    w.add(`tools[${i}]`, `the built-in tool "${String(t.type)}" cannot run on this upstream and was not offered`);
  });
  return out.length ? out : undefined;
}

/**
 * The Responses request as a chat request (plus the warnings of what only the Responses format
 * has). It takes the whole conversation: a `previous_response_id` must have been resolved into
 * `input` before (the gateway does it from its stored responses).
 */
export function convertResponsesRequestToChat(req: ResponsesRequest): ResponsesToChatResult {
  const w = new Warnings();
  if (req.previous_response_id) {
    throw invalidRequest(
      "previous_response_id",
      "this conversion takes the whole conversation; continue a stored response through the gateway",
    );
  }
  for (const k of Object.keys(req)) {
    if (!HANDLED.has(k)) w.add(k, "unknown field, not sent upstream");
    else if (NOT_CARRIED[k] !== undefined && !isUnset(req[k as keyof ResponsesRequest])) w.add(k, NOT_CARRIED[k]); // k is one of HANDLED
  }
  if (req.reasoning?.summary)
    w.add("reasoning.summary", "reasoning summaries are given where the upstream returns its reasoning as text");
  const messages: ChatMessage[] = [];
  if (req.instructions) {
    messages.push({ role: "system", content: req.instructions });
    noteOrigin(messages[0]!, "instructions", { content: "" }); // pushed above
  }
  if (typeof req.input === "string") {
    messages.push({ role: "user", content: req.input });
    noteOrigin(messages.at(-1)!, "input", { content: "" }); // pushed above
  } else messages.push(...itemsToChat(req.input, w));
  noteOrigin(messages, "input", undefined, { whole: true });
  const chat: ChatRequest = { model: req.model, messages };
  const namespaced: Record<string, NamespacedName> = {};
  const custom: Record<string, true> = {};
  const tools = toolsToChat(req.tools, w, namespaced, custom);
  if (tools) chat.tools = tools;
  if (req.tool_choice !== undefined)
    chat.tool_choice =
      typeof req.tool_choice === "string"
        ? req.tool_choice
        : { type: "function", function: { name: req.tool_choice.name } };
  if (req.parallel_tool_calls != null) chat.parallel_tool_calls = req.parallel_tool_calls;
  if (req.max_output_tokens != null) chat.max_completion_tokens = req.max_output_tokens;
  if (req.temperature != null) chat.temperature = req.temperature;
  if (req.top_p != null) chat.top_p = req.top_p;
  if (req.presence_penalty != null) chat.presence_penalty = req.presence_penalty;
  if (req.frequency_penalty != null) chat.frequency_penalty = req.frequency_penalty;
  if (req.service_tier != null) chat.service_tier = req.service_tier;
  const format = req.text?.format;
  if (format?.type === "json_object") chat.response_format = { type: "json_object" };
  if (format?.type === "json_schema") {
    chat.response_format = {
      type: "json_schema",
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description ? { description: format.description } : {}),
        ...(format.strict != null ? { strict: format.strict } : {}),
      },
    };
  }
  if (req.reasoning?.effort) chat.reasoning_effort = req.reasoning.effort;
  const user = req.safety_identifier ?? req.user;
  if (user) chat.user = user;
  if (req.metadata) chat.metadata = req.metadata;
  if (req.store != null) chat.store = req.store;
  if (req.prompt_cache_key) chat.prompt_cache_key = req.prompt_cache_key;
  if (req.stream) chat.stream = true;
  return { request: chat, warnings: w.list, namespaced, custom };
}
