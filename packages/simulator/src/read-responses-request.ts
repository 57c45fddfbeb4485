import { isObject, type JsonObject } from "./json-access";
import { readChatRequest } from "./read-chat-request";
import { responsesAsChat } from "./responses-as-chat";
import { isProblem, type RequestProblem, type SimRequest } from "./sim-request";

/** Parameters of the other protocols that the Responses API answers with a 400 (docs/protocols.md §5.4). */
const FOREIGN_FIELDS = [
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "stop_sequences",
  "stream_options",
  "response_format",
  "reasoning_effort",
  "system",
  "thinking",
  "n",
  "seed",
  "turnpike",
];

/** The settings a response object repeats from its request, as the request gave them. */
const ECHOED = [
  "instructions",
  "max_output_tokens",
  "parallel_tool_calls",
  "temperature",
  "top_p",
  "presence_penalty",
  "frequency_penalty",
  "top_logprobs",
  "max_tool_calls",
  "truncation",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "service_tier",
  "tool_choice",
  "tools",
  "text",
  "store",
  "metadata",
] as const;

function echoOf(body: JsonObject, reasoning: JsonObject): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  for (const k of ECHOED) if (body[k] !== undefined && body[k] !== null) echo[k] = body[k];
  echo.reasoning = { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null };
  return echo;
}

/** The names of a request's custom (free-form) tools. */
function customToolNames(tools: unknown): string[] {
  return (Array.isArray(tools) ? tools : []).flatMap((t: unknown) =>
    isObject(t) && t.type === "custom" && typeof t.name === "string" ? [t.name] : [],
  );
}

const fail = (problem: string, param: string | null = null, code: string | null = null): RequestProblem => ({
  problem,
  param,
  code,
});

/**
 * Reads a Responses body with the real API's own 400 rules for what the gateway could get wrong
 * (a missing input, another protocol's parameters), then as the chat request it equals.
 */
export function readResponsesRequest(body: JsonObject): SimRequest | RequestProblem {
  if (typeof body.model !== "string" || !body.model)
    return fail("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  if (typeof body.input !== "string" && !Array.isArray(body.input))
    return fail("Missing required parameter: 'input'.", "input", "missing_required_parameter");
  for (const f of FOREIGN_FIELDS) if (f in body) return fail(`Unknown parameter: '${f}'.`, f, "unknown_parameter");
  if (Array.isArray(body.input) && body.input.length === 0) {
    return fail(
      "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      "input",
      "empty_array",
    );
  }
  const req = readChatRequest(responsesAsChat(body));
  if (isProblem(req)) return req;
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  const include = Array.isArray(body.include) ? body.include : [];
  return {
    ...req,
    protocol: "responses",
    // Every Responses reply carries its usage.
    includeUsage: true,
    // The reasoning itself is never shown; a summary of it is, when the request asks for one.
    thinking: typeof reasoning.summary === "string" ? "visible" : "hidden",
    responses: {
      encryptedReasoning: include.includes("reasoning.encrypted_content"),
      echo: echoOf(body, reasoning),
      customTools: customToolNames(body.tools),
    },
  };
}
