/**
 * A generateContent client's request → the messages-format pivot (docs/protocols.md §6.2).
 *
 * Turns: `user`/`function` → user, `model` → assistant. Function calls keep their ids (one is made
 * up, `call_<turn>_<n>`, where the client sent none, and a response without an id answers the
 * earliest unanswered call of its name). Thought parts and thought signatures belong to the
 * generateContent deployment that wrote them: they pass through to one, and are dropped with a
 * warning here. Knobs the pivot has no place for are named in warnings; `cachedContent` is a
 * 400 (the cache lives at one vendor, and the prompt it holds cannot be sent elsewhere).
 */
import type {
  ClientTool,
  ContentBlockParam,
  GenerateContentParam,
  GenerateFunctionDeclarationParam,
  GenerateGenerationConfigParam,
  GeneratePartParam,
  GenerateRequest,
  MessageParam,
  MessagesRequest,
  Protocol,
  ThinkingConfig,
  ToolChoice,
  TurnpikeChatParams,
} from "@turnpike/schema";
import { noteOrigin } from "../client-paths.js";
import { invalidRequest } from "../errors.js";
import { sanitizeToolId } from "../ids.js";
import { checkImageMediaType } from "../media.js";
import { SKIP_THOUGHT_SIGNATURE } from "./convert-messages-to-generate-contents.js";
import { decodeThoughtToken, isThoughtToken } from "./thought-token.js";
import { EFFORT_TO_BUDGET } from "../thinking.js";
import { Warnings, type Warning } from "../warnings.js";

export interface GenerateToMessagesOptions {
  /** The catalog id (the path's model). */
  model: string;
  /** `max_tokens` when `generationConfig.maxOutputTokens` is absent (the pivot requires one). */
  defaultMaxTokens: number;
  /** Where the pivot goes next: the messages-upstream sampling rules apply only to `"messages"`. */
  target: Protocol;
  stream: boolean;
}

export interface GenerateToMessagesResult {
  request: MessagesRequest;
  warnings: Warning[];
}

/** Top-level fields this converter reads; any other set field gets a warning. */
const HANDLED = new Set([
  "contents",
  "systemInstruction",
  "tools",
  "toolConfig",
  "generationConfig",
  "safetySettings",
  "cachedContent",
  "model",
]);

/** `generationConfig` fields this converter reads. */
const HANDLED_CONFIG = new Set([
  "temperature",
  "topP",
  "topK",
  "maxOutputTokens",
  "stopSequences",
  "candidateCount",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "thinkingConfig",
]);

/** `thinkingLevel` → the pivot's effort. */
const LEVEL_EFFORT = { MINIMAL: "low", LOW: "low", MEDIUM: "medium", HIGH: "high" } as const;

/**
 * @example
 * ```ts
 * const { request, warnings } = convertGenerateRequestToMessages(body, { model: "alpha-sonnet-4-6", defaultMaxTokens: 4096, target: "messages", stream: false });
 * ```
 */
export function convertGenerateRequestToMessages(
  req: GenerateRequest,
  opts: GenerateToMessagesOptions,
): GenerateToMessagesResult {
  const w = new Warnings();
  if (req.cachedContent !== undefined) {
    throw invalidRequest(
      "cachedContent",
      `cached contents live at one generateContent vendor; ${opts.model} is served by another protocol, which cannot read "${req.cachedContent}". Send the cached prompt in contents instead`,
    );
  }
  const messages = convertContents(req.contents, w, opts.target);
  if (messages.length === 0) throw invalidRequest("contents", "at least one turn with content is required");
  const g = req.generationConfig ?? {};
  const out: MessagesRequest = { model: opts.model, max_tokens: g.maxOutputTokens ?? opts.defaultMaxTokens, messages };
  if (opts.stream) out.stream = true;
  const system = (req.systemInstruction?.parts ?? []).flatMap((p) =>
    typeof p.text === "string" && p.text ? [p.text] : [],
  );
  if (system.length) out.system = system.join("\n\n");
  if (req.systemInstruction?.parts.some((p) => p.text === undefined))
    w.add("systemInstruction.parts", "only text parts of a system instruction are carried to this upstream");

  const tools = convertTools(req, w);
  if (tools.length) out.tools = tools;
  const choice = convertToolConfig(req, w, tools.length > 0);
  if (choice) out.tool_choice = choice;

  const chat: TurnpikeChatParams = {};
  convertGenerationConfig(g, out, chat, w, opts.target === "messages");
  if (Object.keys(chat).length) out.turnpike = { chat };

  if (req.safetySettings?.length)
    w.add("safetySettings", "safety settings are carried only to generateContent upstreams; this one applies its own");
  for (const [k, v] of Object.entries(req))
    if (!HANDLED.has(k) && v !== undefined && v !== null)
      w.add(k, "not a field Turnpike translates; it was not sent upstream");
  for (const [k, v] of Object.entries(g))
    if (!HANDLED_CONFIG.has(k) && v !== undefined && v !== null)
      w.add(`generationConfig.${k}`, "not carried to this upstream");
  return { request: out, warnings: w.list };
}

/** A call the model made, and whether a response answered it yet. */
interface OpenCall {
  id: string;
  name: string;
  answered: boolean;
}

function convertContents(contents: readonly GenerateContentParam[], w: Warnings, target: Protocol): MessageParam[] {
  const out: MessageParam[] = [];
  let calls: OpenCall[] = [];
  contents.forEach((c, i) => {
    const role = c.role === "model" ? "assistant" : "user";
    const blocks: ContentBlockParam[] = [];
    const results: ContentBlockParam[] = [];
    if (role === "assistant") calls = [];
    // The turn's signed thinking, carried by value in a token Turnpike wrote (§6.6): what a
    // messages upstream needs back; the turn's thought parts are its text, already in it.
    const token = c.parts.find(
      (p) => p.thoughtSignature !== undefined && isThoughtToken(p.thoughtSignature),
    )?.thoughtSignature;
    const replayed = token && target === "messages" ? decodeThoughtToken(token) : undefined;
    if (replayed) blocks.push(...replayed);
    c.parts.forEach((p, j) => {
      const at = `contents[${i}].parts[${j}]`;
      // The documented skip value and Turnpike's own tokens carry nothing another upstream could
      // use: only a vendor's real signature is lost here.
      const sig = p.thoughtSignature;
      if (sig !== undefined && sig !== SKIP_THOUGHT_SIGNATURE && !isThoughtToken(sig)) {
        w.add(
          "thoughtSignature",
          "thought signatures are read only by the generateContent deployment that wrote them; dropped toward this upstream",
        );
      }
      if (p.thought === true) {
        if (!token) w.add("thought", "earlier thoughts are not replayed to this upstream");
        return;
      }
      if (p.functionCall) {
        if (role !== "assistant")
          throw invalidRequest(`${at}.functionCall`, 'a functionCall belongs in a "model" turn');
        const id = p.functionCall.id ? sanitizeToolId(p.functionCall.id) : `call_${i}_${calls.length}`;
        calls.push({ id, name: p.functionCall.name, answered: false });
        blocks.push({ type: "tool_use", id, name: p.functionCall.name, input: p.functionCall.args ?? {} });
        return;
      }
      if (p.functionResponse) {
        if (role !== "user")
          throw invalidRequest(`${at}.functionResponse`, 'a functionResponse belongs in a "user" turn');
        const result = toolResult(p.functionResponse, calls, at);
        noteOrigin(result, at, { tool_use_id: "functionResponse", content: "functionResponse.response" });
        results.push(result);
        return;
      }
      for (const b of partBlocks(p, at, w)) {
        if (p.inlineData) noteOrigin(b, at, INLINE_FIELDS);
        else if (p.fileData) noteOrigin(b, at, FILE_FIELDS);
        blocks.push(b);
      }
    });
    // Results first: a messages-format user turn answers its calls before saying anything else.
    const content = [...results, ...blocks];
    if (content.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...content);
    else out.push({ role, content });
  });
  noteOrigin(out, "contents", undefined, { whole: true });
  return out;
}

/** A media block's fields as the part it came from names them (client-paths.ts). */
const INLINE_FIELDS = {
  source: "inlineData",
  "source.data": "inlineData.data",
  "source.media_type": "inlineData.mimeType",
};
const FILE_FIELDS = { source: "fileData", "source.url": "fileData.fileUri", "source.media_type": "fileData.mimeType" };

function toolResult(
  r: NonNullable<GeneratePartParam["functionResponse"]>,
  calls: OpenCall[],
  at: string,
): ContentBlockParam {
  const wanted = r.id ? sanitizeToolId(r.id) : undefined;
  const call = calls.find((c) => !c.answered && (wanted ? c.id === wanted : c.name === r.name));
  if (!call) {
    throw invalidRequest(
      `${at}.functionResponse`,
      `no functionCall ${wanted ? `with the id "${r.id}"` : `named "${r.name}"`} in the model turn just before it is waiting for a response`,
    );
  }
  call.answered = true;
  const response = r.response;
  // The SDKs' convention: `{output}` for a result, `{error}` for a failure; anything else as JSON.
  const keys = Object.keys(response);
  const only = keys.length === 1 ? keys[0] : undefined;
  const value = only === "output" || only === "error" ? response[only] : response;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return { type: "tool_result", tool_use_id: call.id, content: text, ...(only === "error" ? { is_error: true } : {}) };
}

function partBlocks(p: GeneratePartParam, at: string, w: Warnings): ContentBlockParam[] {
  if (typeof p.text === "string") return p.text ? [{ type: "text", text: p.text }] : [];
  if (p.inlineData)
    return [mediaBlock(p.inlineData.mimeType, { type: "base64", data: p.inlineData.data }, `${at}.inlineData`)];
  if (p.fileData) {
    const mime = p.fileData.mimeType ?? "";
    if (!/^https?:\/\//i.test(p.fileData.fileUri)) {
      throw invalidRequest(
        `${at}.fileData.fileUri`,
        "only http(s) URLs can be sent to this upstream; send the file's bytes as inlineData instead",
      );
    }
    return [mediaBlock(mime, { type: "url", url: p.fileData.fileUri }, `${at}.fileData`)];
  }
  if (p.thoughtSignature !== undefined) return [];
  w.add(at, "a part of a kind only generateContent vendors run (code execution and the like); it was not sent");
  return [];
}

type Source = { type: "base64"; data: string } | { type: "url"; url: string };

function mediaBlock(mimeType: string, src: Source, at: string): ContentBlockParam {
  const mime = mimeType.toLowerCase();
  if (mime.startsWith("image/")) {
    if (src.type === "url") return { type: "image", source: src };
    return {
      type: "image",
      source: { type: "base64", media_type: checkImageMediaType(mime, `${at}.mimeType`), data: src.data },
    };
  }
  if (mime === "application/pdf") {
    return src.type === "url"
      ? { type: "document", source: src }
      : { type: "document", source: { type: "base64", media_type: "application/pdf", data: src.data } };
  }
  if (mime.startsWith("text/") && src.type === "base64") {
    return {
      type: "document",
      source: { type: "text", media_type: "text/plain", data: Buffer.from(src.data, "base64").toString("utf8") },
    };
  }
  throw invalidRequest(
    `${at}.mimeType`,
    `"${mimeType || "(none)"}" cannot be sent to this upstream; images, PDFs and plain text can`,
  );
}

function convertTools(req: GenerateRequest, w: Warnings): ClientTool[] {
  const out: ClientTool[] = [];
  (req.tools ?? []).forEach((t, i) => {
    for (const k of Object.keys(t))
      if (k !== "functionDeclarations")
        w.add(`tools[${i}].${k}`, "a tool only generateContent vendors run; it was not offered to the model");
    (t.functionDeclarations ?? []).forEach((d, j) =>
      out.push(clientTool(d, `tools[${i}].functionDeclarations[${j}]`, w)),
    );
  });
  return out;
}

function clientTool(d: GenerateFunctionDeclarationParam, at: string, w: Warnings): ClientTool {
  const field = isObject(d.parametersJsonSchema) ? "parametersJsonSchema" : "parameters";
  const schema = isObject(d.parametersJsonSchema)
    ? d.parametersJsonSchema
    : d.parameters
      ? openApiToJsonSchema(d.parameters)
      : undefined;
  // The pivot's tools (and every other upstream) take an object schema at the root; a function
  // without parameters takes an empty one. Arguments are always an object, so a root without
  // `type` (properties, or a union of object shapes: a messages upstream merges those later) gets
  // `type: "object"`; a root of another type, or a bare reference, cannot be carried, and is
  // named rather than dropped silently.
  let input_schema: Record<string, unknown> = { type: "object", properties: {} };
  if (isObject(schema) && schema.type === "object") input_schema = schema;
  else if (isObject(schema) && schema.type === undefined && !("$ref" in schema))
    input_schema = { ...schema, type: "object" };
  else if (isObject(schema))
    w.add(
      `${at}.${field}`,
      "this upstream takes only an object schema at the root of a function's parameters; the function was offered without them",
    );
  const tool = {
    name: d.name,
    ...(d.description ? { description: d.description } : {}),
    input_schema: input_schema as ClientTool["input_schema"], // an object schema: built above
  };
  noteOrigin(tool, at, { input_schema: field });
  return tool;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The format's OpenAPI subset (`type: "STRING"`, `nullable`) as JSON Schema. */
export function openApiToJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(openApiToJsonSchema);
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "nullable" || k === "propertyOrdering") continue;
    if (k === "type" && typeof v === "string") out.type = v.toLowerCase();
    else if (k === "properties" && isObject(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([n, s]) => [n, openApiToJsonSchema(s)]));
    else out[k] = openApiToJsonSchema(v);
  }
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

function convertToolConfig(req: GenerateRequest, w: Warnings, hasTools: boolean): ToolChoice | undefined {
  const fc = req.toolConfig?.functionCallingConfig;
  if (!fc?.mode) return undefined;
  if (!hasTools && fc.mode !== "NONE") {
    w.add("toolConfig", "ignored: the request offers the model no functions it can call here");
    return undefined;
  }
  switch (fc.mode) {
    case "MODE_UNSPECIFIED":
    case "AUTO":
      return { type: "auto" };
    case "VALIDATED":
      w.add("toolConfig.functionCallingConfig.mode", "VALIDATED is read as AUTO by this upstream");
      return { type: "auto" };
    case "NONE":
      return hasTools ? { type: "none" } : undefined;
    case "ANY": {
      const names = fc.allowedFunctionNames ?? [];
      if (names.length === 1) return { type: "tool", name: names[0]! };
      if (names.length > 1)
        w.add(
          "toolConfig.functionCallingConfig.allowedFunctionNames",
          "this upstream can force one function or any; the model may call any of the offered functions",
        );
      return { type: "any" };
    }
    default: {
      const never: never = fc.mode;
      return never;
    }
  }
}

function convertGenerationConfig(
  g: GenerateGenerationConfigParam,
  out: MessagesRequest,
  chat: TurnpikeChatParams,
  w: Warnings,
  toMessages: boolean,
): void {
  if (g.temperature !== undefined) {
    out.temperature = g.temperature;
    if (toMessages && g.temperature > 1) {
      out.temperature = 1;
      w.add("generationConfig.temperature", `clamped from ${g.temperature} to 1 (this upstream accepts 0-1)`);
    }
  }
  if (g.topP !== undefined) {
    if (toMessages && out.temperature !== undefined)
      w.add(
        "generationConfig.topP",
        "dropped: this upstream does not accept temperature and topP together; temperature was kept",
      );
    else out.top_p = g.topP;
  }
  if (g.topK !== undefined) out.top_k = Math.round(g.topK);
  if (g.stopSequences?.length) out.stop_sequences = g.stopSequences;
  if (g.candidateCount !== undefined && g.candidateCount > 1)
    throw invalidRequest(
      "generationConfig.candidateCount",
      `only one candidate is supported for this model, got ${g.candidateCount}`,
    );
  if (g.seed !== undefined) chat.seed = g.seed;
  if (g.presencePenalty !== undefined) chat.presence_penalty = g.presencePenalty;
  if (g.frequencyPenalty !== undefined) chat.frequency_penalty = g.frequencyPenalty;
  if (toMessages)
    for (const k of ["seed", "presencePenalty", "frequencyPenalty"] as const)
      if (g[k] !== undefined) w.add(`generationConfig.${k}`, "not supported by this upstream");

  // Structured output: a schema → the pivot's json_schema format; JSON without one → JSON mode.
  const mime = g.responseMimeType;
  const schema = isObject(g.responseJsonSchema)
    ? g.responseJsonSchema
    : g.responseSchema
      ? openApiToJsonSchema(g.responseSchema)
      : undefined;
  if (mime === "application/json" || schema !== undefined) {
    if (isObject(schema)) out.output_config = { format: { type: "json_schema", schema } };
    else chat.response_format = { type: "json_object" };
  } else if (mime !== undefined && mime !== "text/plain") {
    w.add("generationConfig.responseMimeType", `"${mime}" is not carried to this upstream; it answers in text`);
  }

  const t = g.thinkingConfig;
  if (!t) return;
  const display = t.includeThoughts === true ? {} : { display: "omitted" as const };
  let thinking: ThinkingConfig | undefined;
  if (t.thinkingBudget === 0) thinking = { type: "disabled" };
  else if (t.thinkingBudget !== undefined && t.thinkingBudget > 0)
    thinking = { type: "enabled", budget_tokens: Math.max(1024, t.thinkingBudget), ...display };
  else if (t.thinkingLevel && t.thinkingLevel !== "THINKING_LEVEL_UNSPECIFIED") {
    thinking = { type: "enabled", budget_tokens: EFFORT_TO_BUDGET[LEVEL_EFFORT[t.thinkingLevel]], ...display };
  } else if (t.thinkingBudget === -1) thinking = { type: "adaptive", ...display };
  if (!thinking) return;
  out.thinking = thinking;
  if (thinking.type !== "enabled") return;
  const budget = thinking.budget_tokens;
  if (out.max_tokens <= budget) {
    // The budget counts toward the output cap: keep the client's cap for the answer on top of it.
    w.add(
      "generationConfig.maxOutputTokens",
      `raised from ${out.max_tokens} to ${budget + out.max_tokens} to fit the ${budget}-token thinking budget`,
    );
    out.max_tokens = budget + out.max_tokens;
  }
  if (!toMessages) return;
  const forced = out.tool_choice?.type === "any" || out.tool_choice?.type === "tool";
  if (forced) {
    w.add(
      "generationConfig.thinkingConfig",
      "ignored: this upstream cannot think while toolConfig forces a function call",
    );
    delete out.thinking;
    return;
  }
  if (out.temperature !== undefined && out.temperature !== 1) {
    w.add(
      "generationConfig.temperature",
      "dropped: with thinking on, this upstream accepts only the default temperature",
    );
    delete out.temperature;
  }
  if (out.top_p !== undefined && out.top_p < 0.95) {
    w.add("generationConfig.topP", "dropped: with thinking on, this upstream accepts only topP >= 0.95");
    delete out.top_p;
  }
}
