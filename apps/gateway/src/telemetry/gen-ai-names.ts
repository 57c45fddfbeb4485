import type { RequestContext } from "../request/context";
import type { Upstream } from "../vocabulary/target";
import type { Endpoint } from "../vocabulary/format";

/**
 * The OpenTelemetry GenAI semantic conventions' words for what Turnpike does (docs/operations.md,
 * "Metrics"): `gen_ai.operation.name` of each endpoint, and `gen_ai.provider.name` of an upstream.
 */
export const OPERATION_NAMES: Record<Endpoint, string> = {
  // The three client formats are all a conversation turn: the conventions' "chat".
  chat: "chat",
  messages: "chat",
  responses: "chat",
  // The generateContent format's `generateContent`, the conventions' "generate_content".
  generate: "generate_content",
  // A tool call through the MCP gateway: the conventions' "execute_tool".
  mcp: "execute_tool",
  // `POST /v1/embeddings`: the conventions' "embeddings".
  embeddings: "embeddings",
  // Not among the conventions' operations, which allow a system's own name for one.
  count_tokens: "count_tokens",
};

/** The count routes answer under their formats (messages, Responses, generateContent): their endpoint is told by the path. */
const COUNT_PATHS = ["/count_tokens", "/input_tokens", ":countTokens"];

/** A request's endpoint, from its format and path (before any usage record says it). */
export function endpointOfRequest(ctx: RequestContext): Endpoint {
  const path = ctx.request.url.split("?", 1)[0] ?? "";
  if (path.endsWith("/v1/embeddings")) return "embeddings";
  return COUNT_PATHS.some((p) => path.endsWith(p)) ? "count_tokens" : ctx.format.endpoint;
}

/** The conventions' well-known provider names, by the API host that identifies the provider. */
const PROVIDER_HOSTS: Record<string, string> = {
  "api.anthropic.com": "anthropic",
  "api.openai.com": "openai",
  "generativelanguage.googleapis.com": "gcp.gemini",
  "aiplatform.googleapis.com": "gcp.vertex_ai",
  "api.mistral.ai": "mistral_ai",
  "api.groq.com": "groq",
  "api.deepseek.com": "deepseek",
  "api.x.ai": "x_ai",
  "api.perplexity.ai": "perplexity",
  "api.cohere.com": "cohere",
};

const known = new WeakMap<Upstream, string>();

/**
 * An upstream's `gen_ai.provider.name`: the conventions' word when its base URL is a well-known
 * provider's (Vertex AI and Azure hosts carry a region or resource name before the suffix), the
 * vendor's own id otherwise (a self-hosted server, the simulator). Worked out once per upstream.
 */
export function providerName(upstream: Upstream): string {
  let name = known.get(upstream);
  if (name !== undefined) return name;
  name = upstream.vendor;
  if (!upstream.simulated) {
    const host = URL.canParse(upstream.baseURL) ? new URL(upstream.baseURL).hostname : "";
    if (host.endsWith(".openai.azure.com")) name = "azure.ai.openai";
    else if (host.endsWith("aiplatform.googleapis.com")) name = "gcp.vertex_ai";
    else if (host.startsWith("bedrock-runtime.")) name = "aws.bedrock";
    else name = PROVIDER_HOSTS[host] ?? upstream.vendor;
  }
  known.set(upstream, name);
  return name;
}
