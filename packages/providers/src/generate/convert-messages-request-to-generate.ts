/**
 * The messages-format pivot → a generateContent request (docs/protocols.md §3.2, §4.1, §4.2).
 *
 * Images and documents by URL: Gemini fetches only its own Files-API URIs and YouTube links
 * (§3.2); other URLs would have to be downloaded by the gateway, which a stateless translator
 * does not do (and fetching client-chosen URLs from the server is an SSRF risk). So an http(s)
 * URL that is not one of those is a 400 asking for base64 (README "Decisions").
 */
import type { ContentBlockParam, MessagesRequest } from "@turnpike/schema";
import { invalidRequest } from "../errors.js";
import { usesCacheControl } from "../cache-control.js";
import { isClientTool } from "../json.js";
import type { SignatureStore } from "../signature-store.js";
import { foldSystemMessage, systemMessageText } from "../system-messages.js";
import { EFFORT_TO_BUDGET } from "../thinking.js";
import { Warnings, type Warning } from "../warnings.js";
import { assistantParts, userParts } from "./convert-messages-to-generate-contents.js";
import { generateToolName } from "./generate-tool-name.js";
import type { GenerateContent, GenerateGenerationConfig, GeneratePart, GenerateRequest } from "./types.js";

export interface MessagesToGenerateOptions {
  /** Thought signatures of earlier generated tool calls (§3.7). */
  signatures?: SignatureStore | undefined;
  /** The model id the upstream knows (default: the request's `model`). */
  upstreamModel?: string | undefined;
  /** The model accepts `thinkingConfig` (default true); if not, thinking is not sent (warning). */
  supportsThinking?: boolean | undefined;
}

export interface MessagesToGenerateResult {
  body: GenerateRequest;
  warnings: Warning[];
  /** Upstream function name → client tool name, for names changed to fit Gemini's rules. */
  toolNames: Record<string, string>;
  model: string;
  method: "generateContent" | "streamGenerateContent";
  /** Path and query to append to the base URL, e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`. */
  path: string;
}

/** Gemini accepts at most 5 stop sequences. */
const MAX_STOP = 5;

/** Top-level fields this converter reads; any other set field gets a warning. */
const HANDLED = new Set([
  "model",
  "max_tokens",
  "messages",
  "system",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "stream",
  "tools",
  "tool_choice",
  "metadata",
  "thinking",
  "output_config",
  "turnpike",
]);

/**
 * @example
 * ```ts
 * const { body, path } = convertMessagesRequestToGenerate(pivot, { signatures });
 * await fetch(`${base}${path}`, { method: "POST", body: JSON.stringify(body) });
 * ```
 */
export function convertMessagesRequestToGenerate(
  req: MessagesRequest,
  opts: MessagesToGenerateOptions = {},
): MessagesToGenerateResult {
  const w = new Warnings();
  const carried = req.turnpike?.chat ?? {};
  const toolNames: Record<string, string> = {};
  const nameOf = (name: string): string => {
    const g = generateToolName(name);
    if (g !== name) toolNames[g] = name;
    return g;
  };

  if (carried.n != null && carried.n > 1) {
    throw invalidRequest("n", `only n=1 is supported for this model, got ${carried.n}`);
  }

  // Tool-call id → function name, from every assistant turn (Gemini needs the name back, §4.1).
  const callNames = new Map<string, string>();
  for (const m of req.messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const b of m.content) if (b.type === "tool_use") callNames.set(b.id, b.name);
  }

  const contents: GenerateContent[] = [];
  req.messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    // generateContent has only the one systemInstruction: a mid-conversation system message is
    // folded into the user's side in its place, marked as system text.
    const parts =
      m.role === "assistant"
        ? assistantParts(m.content, at, nameOf, opts.signatures, w)
        : m.role === "system"
          ? foldedSystem(m.content)
          : userParts(m.content, at, callNames, nameOf, w);
    if (parts.length === 0) return;
    const role = m.role === "assistant" ? "model" : "user";
    const last = contents[contents.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  });
  if (contents.length === 0) throw invalidRequest("messages", "at least one message with content is required");
  if (req.messages.some((m) => m.role === "system"))
    w.add(
      "messages",
      "system messages after the first turn were folded into the user turns as marked system text (this upstream has only one system instruction)",
    );

  const body: GenerateRequest = { contents };
  const system =
    typeof req.system === "string"
      ? req.system
        ? [{ text: req.system }]
        : []
      : (req.system ?? []).map((b) => ({ text: b.text }));
  if (system.length > 0) body.systemInstruction = { parts: system };

  // Tools.
  const declarations = (req.tools ?? []).flatMap((t, i) => {
    if (!isClientTool(t)) {
      w.add(
        `tools[${i}]`,
        `the server tool "${t.type}" is only available on messages-format upstreams; it was not offered to the model`,
      );
      return [];
    }
    // The client's JSON Schema travels whole in `parametersJsonSchema`: `parameters` takes only the
    // vendor's OpenAPI subset, which refuses `allOf`, `oneOf`, `$ref`/`$defs`, `const`, … for the
    // whole request (docs/protocols.md §3.2, §4.9 trap 15), and a rewrite into it would lose them.
    return [
      {
        name: nameOf(t.name),
        ...(t.description ? { description: t.description } : {}),
        parametersJsonSchema: t.input_schema,
      },
    ];
  });
  if (declarations.length > 0) {
    body.tools = [{ functionDeclarations: declarations }];
    const tc = req.tool_choice;
    if (tc) {
      if (tc.type === "auto") body.toolConfig = { functionCallingConfig: { mode: "AUTO" } };
      else if (tc.type === "any") body.toolConfig = { functionCallingConfig: { mode: "ANY" } };
      else if (tc.type === "none") body.toolConfig = { functionCallingConfig: { mode: "NONE" } };
      else body.toolConfig = { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [nameOf(tc.name)] } };
      if (tc.type !== "none" && tc.disable_parallel_tool_use === true) {
        // A chat client's parallel_tool_calls: false arrives as this too: warn under its own name, once.
        w.add(
          carried.parallel_tool_calls === false ? "parallel_tool_calls" : "tool_choice.disable_parallel_tool_use",
          "this upstream has no way to limit parallel tool calls",
        );
      }
    }
  } else if (req.tool_choice && req.tool_choice.type !== "none") {
    w.add("tool_choice", "ignored: the request offers the model no tools it can call here");
  }
  if (carried.parallel_tool_calls === false)
    w.add("parallel_tool_calls", "this upstream has no way to limit parallel tool calls");

  body.generationConfig = generationConfig(req, w, opts.supportsThinking !== false);
  warnOthers(req, w);

  const model = opts.upstreamModel ?? req.model;
  const method = req.stream === true ? "streamGenerateContent" : "generateContent";
  const path = `/v1beta/models/${encodeURIComponent(model)}:${method}${method === "streamGenerateContent" ? "?alt=sse" : ""}`;
  return { body, warnings: w.list, toolNames, model, method, path };
}

function generationConfig(req: MessagesRequest, w: Warnings, thinkingOk: boolean): GenerateGenerationConfig {
  const carried = req.turnpike?.chat ?? {};
  const g: GenerateGenerationConfig = { maxOutputTokens: req.max_tokens };
  if (req.temperature !== undefined) g.temperature = req.temperature;
  if (req.top_p !== undefined) g.topP = req.top_p;
  if (req.top_k !== undefined) g.topK = req.top_k;
  if (req.stop_sequences && req.stop_sequences.length > 0) {
    if (req.stop_sequences.length > MAX_STOP)
      w.add(
        "stop_sequences",
        `only the first ${MAX_STOP} stop sequences were sent (the upstream accepts at most ${MAX_STOP})`,
      );
    g.stopSequences = req.stop_sequences.slice(0, MAX_STOP);
  }
  if (carried.seed != null) g.seed = carried.seed;
  if (carried.presence_penalty != null) g.presencePenalty = carried.presence_penalty;
  if (carried.frequency_penalty != null) g.frequencyPenalty = carried.frequency_penalty;

  // Structured output: a chat client's response_format, else output_config.format.
  const rf = carried.response_format;
  if (rf?.type === "json_object") g.responseMimeType = "application/json";
  else if (rf?.type === "json_schema") {
    g.responseMimeType = "application/json";
    if (rf.json_schema.schema) g.responseJsonSchema = rf.json_schema.schema;
  } else if (req.output_config?.format) {
    g.responseMimeType = "application/json";
    g.responseJsonSchema = req.output_config.format.schema;
  }

  // Thinking (§4.2). "disabled" sends no thinkingConfig: Gemini's pro models reject a 0 budget,
  // and without includeThoughts no thought text comes back (README "Decisions").
  const t = req.thinking;
  if ((t?.type === "enabled" || t?.type === "adaptive") && !thinkingOk) {
    w.add("thinking", "this model does not think; not sent");
  } else if (t?.type === "enabled") {
    g.thinkingConfig = { thinkingBudget: t.budget_tokens, includeThoughts: t.display !== "omitted" };
  } else if (t?.type === "adaptive") {
    const effort = req.output_config?.effort;
    g.thinkingConfig = {
      thinkingBudget: effort ? EFFORT_TO_BUDGET[effort] : -1,
      includeThoughts: t.display !== "omitted",
    };
  }
  return g;
}

function warnOthers(req: MessagesRequest, w: Warnings): void {
  const carried = req.turnpike?.chat ?? {};
  if (carried.logit_bias != null && Object.keys(carried.logit_bias).length > 0)
    w.add("logit_bias", "not supported by this upstream");
  if (carried.logprobs === true) w.add("logprobs", "not supported through this upstream; replies carry no logprobs");
  if (carried.top_logprobs != null && carried.top_logprobs > 0)
    w.add("top_logprobs", "not supported through this upstream");
  if (carried.user !== undefined || req.metadata?.user_id)
    w.add(carried.user !== undefined ? "user" : "metadata.user_id", "end-user ids are not carried to this upstream");
  if (req.service_tier !== undefined) w.add("service_tier", "not carried to this upstream");
  if (usesCacheControl(req)) w.add("cache_control", "prompt-cache breakpoints are not carried to this upstream");
  for (const [k, v] of Object.entries(req)) {
    if (HANDLED.has(k) || k === "service_tier" || k === "cache_control") continue;
    if (v === undefined || v === null) continue;
    w.add(k, "a messages-format-only field; it was not sent to this upstream");
  }
}

function foldedSystem(content: string | ContentBlockParam[]): GeneratePart[] {
  const text = systemMessageText(content);
  return text ? [{ text: foldSystemMessage(text) }] : [];
}
