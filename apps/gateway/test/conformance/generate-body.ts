/**
 * A row's generateContent request, written from its messages one: the same conversation and knobs
 * in the format's own fields (`systemInstruction`, `contents` of parts, `functionDeclarations`
 * with `parametersJsonSchema`, `toolConfig`, `generationConfig`). The model is in the path.
 * A replayed function call carries the format's documented skip signature, as a client that
 * writes history by hand must send to a Gemini 3 model.
 */

const SKIP = "skip_thought_signature_validator";

function parts(content: unknown, names: Map<string, string>): Record<string, unknown>[] {
  const blocks: Record<string, any>[] =
    typeof content === "string" ? [{ type: "text", text: content }] : (content as Record<string, any>[]);
  return blocks.map((b, i) => {
    switch (b.type) {
      case "text":
        return { text: b.text };
      case "image":
      case "document":
        return { inlineData: { mimeType: b.source.media_type, data: b.source.data } };
      case "tool_use":
        names.set(b.id, b.name);
        return {
          functionCall: { id: b.id, name: b.name, args: b.input },
          ...(i === 0 ? { thoughtSignature: SKIP } : {}),
        };
      case "tool_result":
        return {
          functionResponse: { id: b.tool_use_id, name: names.get(b.tool_use_id), response: { output: b.content } },
        };
      default:
        throw new Error(`no generateContent part for ${b.type}`);
    }
  });
}

export function generateBody(messages: Record<string, any>): Record<string, unknown> {
  const names = new Map<string, string>();
  const body: Record<string, unknown> = {
    contents: messages.messages.map((m: Record<string, any>) => ({
      role: m.role === "assistant" ? "model" : "user",
      parts: parts(m.content, names),
    })),
  };
  if (messages.system) body.systemInstruction = { parts: [{ text: messages.system }] };
  if (messages.tools) {
    body.tools = [
      {
        functionDeclarations: messages.tools.map((t: any) => ({
          name: t.name,
          description: t.description,
          parametersJsonSchema: t.input_schema,
        })),
      },
    ];
  }
  const tc = messages.tool_choice;
  if (tc) {
    const mode = { auto: "AUTO", any: "ANY", tool: "ANY", none: "NONE" }[tc.type as string];
    body.toolConfig = {
      functionCallingConfig: { mode, ...(tc.type === "tool" ? { allowedFunctionNames: [tc.name] } : {}) },
    };
  }
  const config: Record<string, unknown> = { maxOutputTokens: messages.max_tokens };
  if (messages.stop_sequences) config.stopSequences = messages.stop_sequences;
  if (messages.thinking?.type === "enabled")
    config.thinkingConfig = { thinkingBudget: messages.thinking.budget_tokens, includeThoughts: true };
  body.generationConfig = config;
  return body;
}
