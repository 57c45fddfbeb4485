import { functionResponseText } from "./count-prompt-tokens";
import { arrayOf, isObject, numberOf, stringList, stringOf, type JsonObject } from "./json-access";
import type { RequestProblem, SimRequest, ThinkingMode, ToolChoice, ToolSpec } from "./sim-request";

// The proto JSON mapping accepts lowerCamel and snake_case names; checks use lowerCamel.
const camel = (k: string) => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const TOP_FIELDS = new Set([
  "model",
  "contents",
  "tools",
  "toolConfig",
  "safetySettings",
  "systemInstruction",
  "generationConfig",
  "cachedContent",
  "labels",
  // The tier a request asks for (standard, flex, priority).
  "serviceTier",
]);
const CONFIG_FIELDS = new Set([
  "stopSequences",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "responseModalities",
  "candidateCount",
  "maxOutputTokens",
  "temperature",
  "topP",
  "topK",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "responseLogprobs",
  "logprobs",
  "enableEnhancedCivicAnswers",
  "speechConfig",
  "thinkingConfig",
  "mediaResolution",
  "imageConfig",
  "audioTimestamp",
]);
// `parameters` and `responseSchema` are an OpenAPI 3.0 subset (docs/protocols.md §3.2, §4.9 #15): JSON
// Schema keys such as `$schema`, `additionalProperties`, `allOf`, `oneOf`, `$ref`, `$defs` or `const`
// are refused for the whole request. `parametersJsonSchema` and `responseJsonSchema` take them all.
const SCHEMA_FIELDS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
]);
const PART_DATA = [
  "text",
  "inlineData",
  "fileData",
  "functionCall",
  "functionResponse",
  "executableCode",
  "codeExecutionResult",
];

const fail = (problem: string): RequestProblem => ({ problem });
const unknownName = (name: string, at?: string) =>
  fail(`Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ""}: Cannot find field.`);

/** Reads `o[key]` under its lowerCamel or snake_case name. */
function field(o: JsonObject, key: string): unknown {
  return o[key] ?? o[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

function checkSchema(s: unknown, at: string): RequestProblem | undefined {
  if (!isObject(s)) return undefined;
  for (const k of Object.keys(s)) if (!SCHEMA_FIELDS.has(camel(k))) return unknownName(k, at);
  if (isObject(s.properties)) {
    for (const [name, sub] of Object.entries(s.properties)) {
      const p = checkSchema(sub, `${at}.properties[${name}].value`);
      if (p) return p;
    }
  }
  const items = checkSchema(s.items, `${at}.items`);
  if (items) return items;
  const any = arrayOf(s.anyOf);
  for (let i = 0; i < any.length; i++) {
    const p = checkSchema(any[i], `${at}.any_of[${i}]`);
    if (p) return p;
  }
  return undefined;
}

const isUser = (c: unknown) => isObject(c) && (c.role === undefined || c.role === "user");

function checkContents(contents: unknown[], model: string): RequestProblem | undefined {
  let turnStart = 0;
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    if (!isObject(c)) return fail(`* GenerateContentRequest.contents[${i}]: must be an object\n`);
    if (c.role !== undefined && c.role !== "user" && c.role !== "model")
      return fail("Please use a valid role: user, model.");
    const parts = arrayOf(c.parts);
    if (parts.length === 0)
      return fail(`* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`);
    for (let j = 0; j < parts.length; j++) {
      const p = parts[j];
      if (!isObject(p) || !PART_DATA.some((k) => field(p, k) !== undefined)) {
        return fail(
          `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field\n`,
        );
      }
      const fr = field(p, "functionResponse");
      if (isObject(fr) && !stringOf(fr.name))
        return fail(
          `* GenerateContentRequest.contents[${i}].parts[${j}].function_response.name: Name cannot be empty.\n`,
        );
    }
    if (isUser(c) && parts.some((p) => isObject(p) && typeof p.text === "string")) turnStart = i;
  }
  // Gemini 3 refuses a function call of the current turn whose first call lost its signature (§3.7).
  if (!/-3([.-]|$)/.test(model)) return undefined;
  for (let i = turnStart; i < contents.length; i++) {
    const c = contents[i] as JsonObject; // checked above
    if (c.role !== "model") continue;
    const first = arrayOf(c.parts).find((p) => isObject(p) && isObject(field(p, "functionCall")));
    const call = isObject(first) ? field(first, "functionCall") : undefined;
    if (isObject(first) && isObject(call) && !field(first, "thoughtSignature")) {
      const name = stringOf(call.name) ?? "";
      return fail(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  }
  return undefined;
}

function trailingTurn(contents: unknown[]): Pick<SimRequest, "turnText" | "toolResult" | "userLast"> {
  let i = contents.length - 1;
  const userLast = isUser(contents[i]);
  while (i >= 0 && !isUser(contents[i])) i--;
  const c = contents[i];
  if (!isObject(c)) return { turnText: "", userLast };
  const texts: string[] = [];
  const results: string[] = [];
  let name: string | undefined;
  for (const p of arrayOf(c.parts)) {
    if (!isObject(p)) continue;
    if (typeof p.text === "string") texts.push(p.text);
    const fr = field(p, "functionResponse");
    if (isObject(fr)) {
      results.push(functionResponseText(fr.response));
      name ??= stringOf(fr.name);
    }
  }
  const turnText = [...texts, ...results].join("\n");
  return results.length === 0
    ? { turnText, userLast }
    : { turnText, userLast, toolResult: { name: name ?? "tool", text: results.join(" ") } };
}

function readToolChoice(toolConfig: unknown): ToolChoice {
  const fcc = isObject(toolConfig) ? field(toolConfig, "functionCallingConfig") : undefined;
  if (!isObject(fcc)) return { kind: "auto" };
  if (fcc.mode === "NONE") return { kind: "none" };
  if (fcc.mode !== "ANY") return { kind: "auto" };
  const allowed = stringList(field(fcc, "allowedFunctionNames"));
  return allowed[0] !== undefined ? { kind: "named", name: allowed[0] } : { kind: "required" };
}

/**
 * Reads a generateContent body (model and streaming come from the URL), applying the real API's
 * own 400 rules (docs/protocols.md §3.2, §3.7, §4.9 #15). Field names are read as lowerCamel or
 * snake_case, as the proto JSON mapping allows.
 */
export function readGenerateRequest(body: JsonObject, model: string, stream: boolean): SimRequest | RequestProblem {
  for (const k of Object.keys(body)) if (!TOP_FIELDS.has(camel(k))) return unknownName(k);
  const contents = arrayOf(field(body, "contents"));
  if (contents.length === 0) return fail("* GenerateContentRequest.contents: contents is not specified\n");
  const config = field(body, "generationConfig");
  const cfg: JsonObject = isObject(config) ? config : {};
  for (const k of Object.keys(cfg)) if (!CONFIG_FIELDS.has(camel(k))) return unknownName(k, "generation_config");
  if (field(cfg, "responseSchema") !== undefined && field(cfg, "responseJsonSchema") !== undefined)
    return fail(
      "* GenerateContentRequest.generation_config: response_schema and response_json_schema cannot both be set.\n",
    );
  const responseSchemaProblem = checkSchema(field(cfg, "responseSchema"), "generation_config.response_schema");
  if (responseSchemaProblem) return responseSchemaProblem;
  const tools: ToolSpec[] = [];
  const groups = arrayOf(body.tools);
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i];
    const decls = isObject(g) ? arrayOf(field(g, "functionDeclarations")) : [];
    for (let j = 0; j < decls.length; j++) {
      const d = decls[j];
      if (!isObject(d) || !stringOf(d.name))
        return fail(`* GenerateContentRequest.tools[${i}].function_declarations[${j}].name: Name cannot be empty.\n`);
      const at = `tools[${i}].function_declarations[${j}]`;
      if (d.parameters !== undefined && field(d, "parametersJsonSchema") !== undefined)
        return fail(`* GenerateContentRequest.${at}: parameters and parameters_json_schema cannot both be set.\n`);
      const p = checkSchema(d.parameters, `${at}.parameters`);
      if (p) return p;
      tools.push({ name: String(d.name), schema: d.parameters ?? field(d, "parametersJsonSchema") ?? {} });
    }
  }
  const problem = checkContents(contents, model);
  if (problem) return problem;
  const tc = field(cfg, "thinkingConfig");
  let thinking: ThinkingMode = "hidden";
  if (isObject(tc) && field(tc, "thinkingBudget") === 0) thinking = "off";
  else if (isObject(tc) && field(tc, "includeThoughts") === true) thinking = "visible";
  const req: SimRequest = {
    protocol: "generate",
    model,
    stream,
    includeUsage: false,
    ...trailingTurn(contents),
    tools,
    toolChoice: readToolChoice(field(body, "toolConfig")),
    parallelTools: true,
    stopSequences: stringList(field(cfg, "stopSequences")),
    thinking,
  };
  const maxTokens = numberOf(field(cfg, "maxOutputTokens"));
  if (maxTokens !== undefined) req.maxTokens = maxTokens;
  const schema = field(cfg, "responseJsonSchema") ?? field(cfg, "responseSchema");
  if (schema !== undefined || field(cfg, "responseMimeType") === "application/json")
    req.json = schema === undefined ? {} : { schema };
  return req;
}
