import { arrayOf, isObject, stringOf, type JsonObject } from "./json-access";

/**
 * A Responses request body as the chat-completions body that asks the same: the simulator reads,
 * checks and counts a Responses request through its chat reader (the two share everything the
 * simulator looks at). Lenient: what it does not know it leaves out, so counting never throws.
 */

function part(p: unknown): unknown {
  if (!isObject(p)) return p;
  switch (p.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: stringOf(p.text) ?? "" };
    case "refusal":
      return { type: "text", text: stringOf(p.refusal) ?? "" };
    case "input_image":
      return { type: "image_url", image_url: { url: stringOf(p.image_url) ?? "" } };
    case "input_file":
      return {
        type: "file",
        file: { file_data: stringOf(p.file_data) ?? "", filename: stringOf(p.filename) ?? "file" },
      };
    default:
      return p;
  }
}

function content(c: unknown): unknown {
  return typeof c === "string" ? c : arrayOf(c).map(part);
}

function itemsAsMessages(input: unknown): JsonObject[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const messages: JsonObject[] = [];
  for (const item of arrayOf(input)) {
    if (!isObject(item)) {
      messages.push({ role: "user", content: "" });
      continue;
    }
    if (item.type === "function_call" || item.type === "custom_tool_call") {
      const args =
        item.type === "custom_tool_call"
          ? JSON.stringify({ input: stringOf(item.input) ?? "" })
          : (stringOf(item.arguments) ?? "");
      const call = {
        id: stringOf(item.call_id) ?? "",
        type: "function",
        function: { name: stringOf(item.name) ?? "", arguments: args },
      };
      const last = messages.at(-1);
      if (last?.role === "assistant") last.tool_calls = [...arrayOf(last.tool_calls), call];
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      messages.push({ role: "tool", tool_call_id: stringOf(item.call_id) ?? "", content: content(item.output) });
    } else if (item.type === undefined || item.type === "message") {
      messages.push({ role: item.role, content: content(item.content) });
    }
    // Reasoning items (and the vendor's other item types) carry nothing the simulator reads.
  }
  return messages;
}

/** Function tools, and the functions of namespace tools; built-in tools run nowhere here. */
function tools(list: unknown): JsonObject[] {
  const out: JsonObject[] = [];
  const fn = (t: JsonObject) =>
    out.push({ type: "function", function: { name: t.name, parameters: t.parameters ?? {} } });
  for (const t of arrayOf(list)) {
    if (!isObject(t)) continue;
    if (t.type === "function") fn(t);
    // A custom (free-form) tool: the simulator writes its input as the one string argument `input`.
    if (t.type === "custom")
      out.push({
        type: "function",
        function: {
          name: t.name,
          parameters: { type: "object", properties: { input: { type: "string" } }, required: ["input"] },
        },
      });
    if (t.type === "namespace") for (const inner of arrayOf(t.tools)) if (isObject(inner)) fn(inner);
  }
  return out;
}

export function responsesAsChat(body: JsonObject): JsonObject {
  const messages = itemsAsMessages(body.input);
  if (typeof body.instructions === "string" && body.instructions)
    messages.unshift({ role: "system", content: body.instructions });
  const chat: JsonObject = { model: body.model, messages };
  const offered = tools(body.tools);
  if (offered.length) chat.tools = offered;
  const tc = body.tool_choice;
  if (typeof tc === "string") chat.tool_choice = tc;
  else if (isObject(tc) && tc.type === "function") chat.tool_choice = { type: "function", function: { name: tc.name } };
  if (body.parallel_tool_calls !== undefined) chat.parallel_tool_calls = body.parallel_tool_calls;
  if (body.max_output_tokens !== undefined) chat.max_completion_tokens = body.max_output_tokens;
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.stream !== undefined) chat.stream = body.stream;
  const format = isObject(body.text) && isObject(body.text.format) ? body.text.format : undefined;
  if (format?.type === "json_object") chat.response_format = { type: "json_object" };
  if (format?.type === "json_schema")
    chat.response_format = { type: "json_schema", json_schema: { name: format.name, schema: format.schema } };
  return chat;
}
