import { askHooks } from "./hook";
import { blockedError, strings } from "./pivot";
import { type GuardrailsConfig, policiesFor } from "./policy";
import { GuardrailBlock, GuardrailRun } from "./run";

/**
 * The guardrails of the surfaces beside a conversation (docs/guardrails.md, "What is read"):
 * embeddings input, batch lines sent to an upstream's batch API, stored responses.
 */

/** The request's guardrails, or undefined when no policy applies to the key (no cost then). */
export function guardFor(
  config: GuardrailsConfig,
  key: Parameters<typeof policiesFor>[1],
  requestId: string,
): GuardrailRun | undefined {
  if (!config.policies.size) return undefined;
  const policies = policiesFor(config, key);
  return policies.length ? new GuardrailRun(policies, requestId) : undefined;
}

/**
 * Embeddings inputs with what the policies find replaced before they are sent (surface `prompt`;
 * token-id inputs go as they are). A vector has nothing to restore a value in, so `redact` acts
 * as `mask`. The policies' hooks are asked first; a block is the client's 400.
 */
export async function redactInputs<T>(run: GuardrailRun, inputs: readonly T[], fetcher?: typeof fetch): Promise<T[]> {
  try {
    const texts = inputs.flatMap((t) => (typeof t === "string" ? [{ surface: "prompt" as const, text: t }] : []));
    const hooked = run.hooked ? await askHooks(run, texts, run.requestId, fetcher) : undefined;
    let i = 0;
    return inputs.map((t) =>
      typeof t === "string" ? (run.text(t, "prompt", hooked?.[i++], { restorable: false }) as T) : t,
    );
  } catch (e) {
    throw e instanceof GuardrailBlock ? blockedError(e) : e;
  }
}

/**
 * What a stored response keeps (docs/guardrails.md, "Stored responses"): the redacted form — each
 * value a policy redacts as the placeholder the upstream saw, each masked value as its tag — in
 * every string of the conversation and the reply. The mapping is never stored, so a stored reply
 * read back (`GET /v1/responses/{id}`) or continued (`previous_response_id`) holds no value the
 * policies took out. Neither counted again nor blocked: the request was read already.
 */
export function storedForm<T>(run: GuardrailRun, v: T): T {
  return strings(v, (s) => run.text(s, "prompt", undefined, { quiet: true })) as T;
}

/** Every `text` string inside `v` (at any depth) through `f`; every other value as it was. */
function texts(v: unknown, f: (s: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => texts(x, f));
  if (!v || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === "text" && typeof x === "string" ? f(x) : texts(x, f);
  return out;
}

/**
 * What an MCP server sends back of a prompt or a resource (docs/guardrails.md, "MCP"): each
 * `text` inside (a prompt message's text, an embedded or read resource's text) read by the
 * policies covering `mcp` — a value found masked (nothing would restore it), a block thrown as
 * GuardrailBlock — then this request's placeholders restored (a prompt's arguments come back as
 * the client wrote them). Read as the server wrote it, before restoring, so the client's own
 * value is never flagged. URIs, names and blobs pass as they are.
 */
export function guardMcpContent<T>(run: GuardrailRun, v: T): T {
  return texts(v, (s) => run.restoreText(run.text(s, "mcp", undefined, { restorable: false }))) as T; // the same shape, `text` strings replaced
}
