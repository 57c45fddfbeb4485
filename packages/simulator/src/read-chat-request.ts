import { resultText } from "./count-prompt-tokens";
import { arrayOf, isObject, numberOf, stringList, stringOf, type JsonObject } from "./json-access";
import type { RequestProblem, SimRequest, ToolChoice, ToolSpec } from "./sim-request";

const ROLES = ["system", "developer", "user", "assistant", "tool", "function"];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
// Fields of the messages format (and the gateway's own extension) that the real API rejects.
const FOREIGN_FIELDS = [
  "system",
  "stop_sequences",
  "top_k",
  "thinking",
  "turnpike",
  "output_config",
  "container",
  "inference_geo",
];

const fail = (problem: string, param: string | null = null, code: string | null = null): RequestProblem => ({
  problem,
  param,
  code,
});

function readToolChoice(v: unknown): ToolChoice {
  if (v === "none") return { kind: "none" };
  if (v === "required") return { kind: "required" };
  if (isObject(v) && isObject(v.function) && typeof v.function.name === "string")
    return { kind: "named", name: v.function.name };
  if (isObject(v) && isObject(v.allowed_tools) && v.allowed_tools.mode === "required") return { kind: "required" };
  return { kind: "auto" };
}

function contentText(content: unknown): string {
  return typeof content === "string" ? content : resultText(content);
}

/** Tool pairing as the real API enforces it: each `tool` message answers a preceding call. */
function checkMessages(messages: unknown[]): RequestProblem | undefined {
  let open: string[] = [];
  let openAt = -1;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObject(m))
      return fail(
        `Invalid type for 'messages[${i}]': expected an object, but got ${typeof m} instead.`,
        `messages[${i}]`,
        "invalid_type",
      );
    if (!ROLES.includes(String(m.role))) {
      return fail(
        `Invalid value: '${String(m.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
        "invalid_value",
      );
    }
    if (m.role === "tool") {
      const id = stringOf(m.tool_call_id);
      if (id === undefined || !open.includes(id)) {
        return fail(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        );
      }
      open = open.filter((x) => x !== id);
      continue;
    }
    if (open.length > 0) {
      return fail(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${open.join(", ")}`,
        `messages.[${openAt}].role`,
      );
    }
    if (m.role === "assistant") {
      open = arrayOf(m.tool_calls)
        .filter(isObject)
        .map((c) => String(c.id));
      openAt = i;
    }
  }
  return undefined;
}

function trailingTurn(messages: unknown[]): Pick<SimRequest, "turnText" | "toolResult" | "userLast"> {
  let end = messages.length - 1;
  const side = (i: number) => {
    const m = messages[i];
    return isObject(m) && (m.role === "user" || m.role === "tool");
  };
  const last = messages.findLast((m) => !isObject(m) || (m.role !== "system" && m.role !== "developer"));
  const userLast = isObject(last) && (last.role === "user" || last.role === "tool");
  while (end >= 0 && !side(end)) end--;
  let start = end;
  while (start > 0 && side(start - 1)) start--;
  const texts: string[] = [];
  const results: string[] = [];
  let resultId: string | undefined;
  for (let i = start; i >= 0 && i <= end; i++) {
    const m = messages[i] as JsonObject; // side(i) checked it is an object
    if (m.role === "user") texts.push(contentText(m.content));
    else {
      results.push(contentText(m.content));
      resultId ??= stringOf(m.tool_call_id);
    }
  }
  const turnText = [...texts, ...results].join("\n");
  if (results.length === 0) return { turnText, userLast };
  let name = "tool";
  for (const m of messages.slice(0, start)) {
    for (const c of isObject(m) ? arrayOf(m.tool_calls) : []) {
      if (isObject(c) && c.id === resultId && isObject(c.function)) name = stringOf(c.function.name) ?? name;
    }
  }
  return { turnText, userLast, toolResult: { name, text: results.join(" ") } };
}

/** Reads a chat-completions body, applying the real API's own 400 rules (docs/protocols.md §2.2, §2.3, §2.7). */
export function readChatRequest(body: JsonObject): SimRequest | RequestProblem {
  const model = stringOf(body.model);
  if (!model) return fail("you must provide a model parameter");
  if (body.messages === undefined)
    return fail("Missing required parameter: 'messages'.", "messages", "missing_required_parameter");
  if (!Array.isArray(body.messages))
    return fail(
      "Invalid type for 'messages': expected an array, but got something else instead.",
      "messages",
      "invalid_type",
    );
  if (body.messages.length === 0) {
    return fail(
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      "messages",
      "empty_array",
    );
  }
  for (const f of FOREIGN_FIELDS) if (f in body) return fail(`Unrecognized request argument supplied: ${f}`);
  const temperature = numberOf(body.temperature);
  if (temperature !== undefined && temperature > 2) {
    return fail(
      `Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got ${temperature} instead.`,
      "temperature",
      "decimal_above_max_value",
    );
  }
  if (body.stream_options != null && body.stream !== true) {
    return fail(
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      "stream_options",
      "invalid_value",
    );
  }
  const tools: ToolSpec[] = [];
  const defs = arrayOf(body.tools);
  for (let i = 0; i < defs.length; i++) {
    const t = defs[i];
    const f = isObject(t) && isObject(t.function) ? t.function : undefined;
    if (!f)
      return fail(
        `Missing required parameter: 'tools[${i}].function'.`,
        `tools[${i}].function`,
        "missing_required_parameter",
      );
    const name = stringOf(f.name) ?? "";
    if (!TOOL_NAME.test(name)) {
      return fail(
        `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
        `tools[${i}].function.name`,
        "invalid_value",
      );
    }
    tools.push({ name, schema: f.parameters ?? {} });
  }
  const problem = checkMessages(body.messages);
  if (problem) return problem;
  const req: SimRequest = {
    protocol: "chat",
    model,
    stream: body.stream === true,
    includeUsage: body.stream === true && isObject(body.stream_options) && body.stream_options.include_usage === true,
    // The tier that serves: the one asked for, `auto` served at the default one.
    ...(typeof body.service_tier === "string" && body.service_tier !== "auto"
      ? { serviceTier: body.service_tier }
      : {}),
    ...trailingTurn(body.messages),
    tools,
    toolChoice: readToolChoice(body.tool_choice),
    parallelTools: body.parallel_tool_calls !== false,
    stopSequences: stringList(body.stop),
    // Compatible vendors stream reasoning as `reasoning_content` whenever the model thinks.
    thinking: "visible",
  };
  const maxTokens = numberOf(body.max_completion_tokens) ?? numberOf(body.max_tokens);
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  const rf = body.response_format;
  if (isObject(rf) && rf.type === "json_object") req.json = {};
  if (isObject(rf) && rf.type === "json_schema")
    req.json = { schema: isObject(rf.json_schema) ? rf.json_schema.schema : undefined };
  return req;
}
