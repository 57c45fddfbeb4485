import { resultText } from "./count-prompt-tokens";
import { arrayOf, isObject, numberOf, stringList, stringOf, type JsonObject } from "./json-access";
import type { RequestProblem, SimRequest, ThinkingMode, ToolChoice, ToolSpec } from "./sim-request";

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
// Fields of the other formats (and the gateway's own extension) that the real API rejects.
const FOREIGN_FIELDS = [
  "turnpike",
  "stop",
  "n",
  "seed",
  "response_format",
  "frequency_penalty",
  "presence_penalty",
  "max_completion_tokens",
  "stream_options",
  "logprobs",
  "top_logprobs",
  "user",
  "parallel_tool_calls",
];
const DOCS = "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

const fail = (problem: string): RequestProblem => ({ problem });

function readToolChoice(v: unknown): ToolChoice {
  if (!isObject(v)) return { kind: "auto" };
  if (v.type === "any") return { kind: "required" };
  if (v.type === "none") return { kind: "none" };
  if (v.type === "tool" && typeof v.name === "string") return { kind: "named", name: v.name };
  return { kind: "auto" };
}

/** Checks the conversation the way the real API does; returns the first problem. */
function checkMessages(messages: unknown[]): RequestProblem | undefined {
  let pendingToolUse: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObject(m)) return fail(`messages.${i}: Input should be a valid dictionary`);
    // Mid-conversation system messages (docs/protocols.md §1.2): text only, and transparent to
    // the pairing of tool calls and their results.
    if (m.role === "system") {
      if (typeof m.content === "string") continue;
      if (!Array.isArray(m.content)) return fail(`messages.${i}.content: Field required`);
      if (m.content.some((b) => !isObject(b) || b.type !== "text" || typeof b.text !== "string" || b.text === "")) {
        return fail(`messages.${i}.content: system messages may hold only non-empty text blocks`);
      }
      continue;
    }
    if (m.role !== "user" && m.role !== "assistant")
      return fail(`messages.${i}.role: Input should be 'user', 'assistant' or 'system'`);
    const blocks = typeof m.content === "string" ? [] : arrayOf(m.content);
    if (typeof m.content !== "string" && !Array.isArray(m.content))
      return fail(`messages.${i}.content: Field required`);
    const results = new Set<string>();
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (!isObject(b)) return fail(`messages.${i}.content.${j}: Input should be a valid dictionary`);
      if (b.type === "text" && (typeof b.text !== "string" || b.text === ""))
        return fail("messages: text content blocks must be non-empty");
      if (b.type === "tool_use" && !TOOL_ID.test(stringOf(b.id) ?? "")) {
        return fail(`messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
      }
      if (b.type === "tool_result") {
        const id = stringOf(b.tool_use_id) ?? "";
        if (!pendingToolUse.includes(id)) {
          return fail(
            `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
          );
        }
        results.add(id);
      }
    }
    const missing = pendingToolUse.filter((id) => !results.has(id));
    if (missing.length > 0) {
      return fail(
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
    pendingToolUse =
      m.role === "assistant"
        ? blocks
            .filter(isObject)
            .filter((b) => b.type === "tool_use")
            .map((b) => String(b.id))
        : [];
  }
  return undefined;
}

/** The trailing user turn (skipping an assistant prefill): its text, tool results and their tool names. */
function trailingTurn(messages: unknown[]): Pick<SimRequest, "turnText" | "toolResult" | "userLast"> {
  let i = messages.length - 1;
  const isUser = (m: unknown) => isObject(m) && m.role === "user";
  const last = messages.findLast((m) => !isObject(m) || m.role !== "system");
  const userLast = isUser(last);
  while (i >= 0 && !isUser(messages[i])) i--;
  const m = messages[i];
  if (!isObject(m)) return { turnText: "", userLast };
  if (typeof m.content === "string") return { turnText: m.content, userLast };
  const texts: string[] = [];
  const results: string[] = [];
  let resultId: string | undefined;
  for (const b of arrayOf(m.content)) {
    if (!isObject(b)) continue;
    if (b.type === "text" && typeof b.text === "string") texts.push(b.text);
    if (b.type === "tool_result") {
      results.push(resultText(b.content));
      resultId ??= stringOf(b.tool_use_id);
    }
  }
  const turnText = [...texts, ...results].join("\n");
  if (results.length === 0) return { turnText, userLast };
  // The tool's name comes from the matching tool_use of the previous assistant turn.
  let p = i - 1;
  while (p >= 0 && isObject(messages[p]) && (messages[p] as JsonObject).role === "system") p--; // an object: checked in the condition
  const prev = messages[p];
  const use = isObject(prev) ? arrayOf(prev.content).find((b) => isObject(b) && b.id === resultId) : undefined;
  return {
    turnText,
    userLast,
    toolResult: { name: (isObject(use) && stringOf(use.name)) || "tool", text: results.join(" ") },
  };
}

/** Blocks that may carry `cache_control` in one request, at most (tools, system and message blocks). */
const MAX_CACHE_BREAKPOINTS = 4;

function countCacheBreakpoints(body: JsonObject): number {
  const marked = (b: unknown) => (isObject(b) && isObject(b.cache_control) ? 1 : 0);
  let n = 0;
  for (const t of arrayOf(body.tools)) n += marked(t);
  for (const b of arrayOf(body.system)) n += marked(b);
  for (const m of arrayOf(body.messages)) if (isObject(m)) for (const b of arrayOf(m.content)) n += marked(b);
  return n;
}

/**
 * Reads a messages-protocol body (`/v1/messages`, or `/count_tokens` with `countOnly`), applying
 * the real API's own 400 rules (docs/protocols.md §1.2, §1.3, §4.2, §4.9 #10–#13).
 */
export function readMessagesRequest(body: JsonObject, countOnly = false): SimRequest | RequestProblem {
  const model = stringOf(body.model);
  if (!model) return fail("model: Field required");
  if (!Array.isArray(body.messages)) return fail("messages: Field required");
  const maxTokens = numberOf(body.max_tokens);
  if (!countOnly && body.max_tokens === undefined) return fail("max_tokens: Field required");
  if (!countOnly && (maxTokens === undefined || !Number.isInteger(maxTokens) || maxTokens < 0))
    return fail("max_tokens: Input should be a valid integer");
  for (const f of FOREIGN_FIELDS) if (f in body) return fail(`${f}: Extra inputs are not permitted`);
  const temperature = numberOf(body.temperature);
  if (temperature !== undefined && (temperature < 0 || temperature > 1)) return fail("temperature: range: 0..1");
  if (body.temperature !== undefined && body.top_p !== undefined) {
    return fail("`temperature` and `top_p` cannot both be specified for this model. Please use only one.");
  }
  const toolChoice = readToolChoice(body.tool_choice);
  let thinking: ThinkingMode = "off";
  const th = body.thinking;
  if (isObject(th) && (th.type === "enabled" || th.type === "adaptive")) {
    thinking = "visible";
    if (th.type === "enabled") {
      const budget = numberOf(th.budget_tokens) ?? 0;
      if (budget < 1024) return fail("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
      if (!countOnly && maxTokens !== undefined && maxTokens <= budget) {
        return fail(
          `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${DOCS}#max-tokens-and-context-window-size`,
        );
      }
      if (toolChoice.kind === "required" || toolChoice.kind === "named")
        return fail("Thinking may not be enabled when tool_choice forces tool use.");
    }
    if (temperature !== undefined && temperature !== 1)
      return fail(`\`temperature\` may only be set to 1 when thinking is enabled. ${DOCS}#feature-compatibility`);
  }
  const tools: ToolSpec[] = [];
  const defs = arrayOf(body.tools);
  for (let i = 0; i < defs.length; i++) {
    const t = defs[i];
    if (!isObject(t) || typeof t.name !== "string") return fail(`tools.${i}.custom.name: Field required`);
    if (t.type === undefined || t.type === "custom") {
      if (!isObject(t.input_schema)) return fail(`tools.${i}.custom.input_schema: Field required`);
      // The real API refuses a root union for the whole request (docs/protocols.md §4.9 #15).
      if (["oneOf", "allOf", "anyOf"].some((k) => k in (t.input_schema as object)))
        return fail(
          `tools.${i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`,
        );
      tools.push({ name: t.name, schema: t.input_schema });
    }
  }
  const problem = checkMessages(body.messages);
  if (problem) return problem;
  // The real API's limit; it also keeps the prompt cache's work linear (one prefix per breakpoint).
  const marks = countCacheBreakpoints(body);
  if (marks > MAX_CACHE_BREAKPOINTS)
    return fail(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks}.`);
  const req: SimRequest = {
    protocol: "messages",
    model,
    stream: body.stream === true,
    includeUsage: false,
    ...trailingTurn(body.messages),
    tools,
    toolChoice,
    parallelTools: !(isObject(body.tool_choice) && body.tool_choice.disable_parallel_tool_use === true),
    stopSequences: stringList(body.stop_sequences),
    thinking,
  };
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  const format = isObject(body.output_config) ? body.output_config.format : undefined;
  if (isObject(format) && format.type === "json_schema") req.json = { schema: format.schema };
  return req;
}
