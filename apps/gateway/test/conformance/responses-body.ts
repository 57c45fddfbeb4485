/**
 * A row's Responses request, written from its chat one: the same conversation and knobs in the
 * Responses format's own fields (a leading system message as `instructions`, tool calls as
 * `function_call` items, results as `function_call_output` items, flat function tools). The
 * Responses API has no stop sequences, so a `stop` is not part of it.
 */
import type { Upstream } from "./upstreams";

function part(p: Record<string, any>): Record<string, unknown> {
  if (p.type === "text") return { type: "input_text", text: p.text };
  if (p.type === "image_url") return { type: "input_image", image_url: p.image_url.url };
  if (p.type === "file") return { type: "input_file", filename: p.file.filename, file_data: p.file.file_data };
  throw new Error(`no Responses part for ${p.type}`);
}

function items(messages: Record<string, any>[]): Record<string, unknown>[] {
  return messages.flatMap((m): Record<string, unknown>[] => {
    if (m.role === "tool") return [{ type: "function_call_output", call_id: m.tool_call_id, output: m.content }];
    if (m.role === "assistant") {
      const calls = (m.tool_calls ?? []).map((c: any) => ({
        type: "function_call",
        call_id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      }));
      return [...(m.content ? [{ role: "assistant", content: m.content }] : []), ...calls];
    }
    return [{ role: m.role, content: typeof m.content === "string" ? m.content : m.content.map(part) }];
  });
}

export function responsesBody(chat: Record<string, any>, upstream: Upstream): Record<string, unknown> {
  const [first, ...rest] = chat.messages as Record<string, any>[];
  const system = first?.role === "system";
  const body: Record<string, unknown> = {
    model: chat.model,
    ...(system ? { instructions: first.content } : {}),
    input: items(system ? rest : chat.messages),
  };
  if (chat.tools)
    body.tools = chat.tools.map((t: any) => ({
      type: "function",
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters,
    }));
  if (typeof chat.tool_choice === "string") body.tool_choice = chat.tool_choice;
  else if (chat.tool_choice) body.tool_choice = { type: "function", name: chat.tool_choice.function.name };
  if (chat.max_completion_tokens) body.max_output_tokens = chat.max_completion_tokens;
  // A Responses vendor shows reasoning only as a summary, asked for; translated upstreams give
  // their reasoning text as the summary without being asked (a summary asked of them is a warning).
  if (chat.reasoning_effort)
    body.reasoning =
      upstream.protocol === "responses"
        ? { effort: chat.reasoning_effort, summary: "auto" }
        : { effort: chat.reasoning_effort };
  return body;
}
