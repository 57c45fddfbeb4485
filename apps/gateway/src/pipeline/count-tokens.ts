import { convertMessagesRequestToGenerate, upstreamErrorToGatewayError } from "@turnpike/providers";
import { validateCountTokensRequest, type MessagesRequest } from "@turnpike/schema";
import type { GatewayDeps } from "../deps";
import { generateCountBody, upstreamCountCall } from "../upstream/upstream";
import { authenticate } from "./authenticate";
import { HEADER, errorResponse, idHeaders } from "./dialect";
import { readJsonObject, validationError } from "./read-body";
import { newRequestId } from "./request-id";
import { resolveModel } from "./resolve";

/**
 * `POST /v1/messages/count_tokens` for every catalog model: the upstream's own count where the
 * vendor has one (messages, generateContent), else Turnpike's local tokenizer.
 */
export async function handleCountTokens(deps: GatewayDeps, request: Request, address: () => string): Promise<Response> {
  const requestId = newRequestId();
  try {
    const key = authenticate(deps, request.headers, "messages", address);
    const raw = await readJsonObject(request);
    const checked = validateCountTokensRequest(raw);
    if (!checked.ok) throw validationError(checked.issues);
    const entry = resolveModel(deps.catalog, deps.keys, key, checked.value.model, "messages");
    // The pivot needs an output cap; counting ignores it.
    const pivot = { ...checked.value, max_tokens: 1 } as MessagesRequest;
    const up = deps.upstreams[entry.owned_by];
    const call = upstreamCountCall(up, entry, entry.protocol);
    const headers = new Headers(idHeaders("messages", requestId));
    headers.set(HEADER.upstream, up.simulated ? "simulator" : entry.owned_by);
    let inputTokens: number;
    if (!call) {
      inputTokens = deps.countPrompt(pivot);
      headers.set("x-turnpike-count", "local");
    } else {
      let body: unknown;
      if (entry.protocol === "messages") {
        body = { ...checked.value, model: entry.upstream_model };
      } else {
        // The count call wraps the same request body the generate call would send.
        const g = convertMessagesRequestToGenerate(pivot, { signatures: deps.signatures }).body;
        body = generateCountBody(g, entry);
      }
      const res = await deps.fetch(call.url, { method: "POST", headers: call.headers, body: JSON.stringify(body) });
      const text = await res.text();
      if (!res.ok) throw upstreamErrorToGatewayError(entry.protocol, res.status, text, res.headers);
      const json = JSON.parse(text) as { input_tokens?: number; totalTokens?: number };
      inputTokens = Number(json.input_tokens ?? json.totalTokens ?? 0);
      headers.set("x-turnpike-count", "upstream");
    }
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify({ input_tokens: inputTokens }), { status: 200, headers });
  } catch (e) {
    return errorResponse("messages", e, requestId);
  }
}
