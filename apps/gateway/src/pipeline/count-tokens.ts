import type { MessagesRequest } from "@turnpike/schema";
import { validateCountTokensRequest } from "@turnpike/schema";
import type { GatewayDeps } from "../deps";
import { FORMATS } from "../formats";
import { PROTOCOLS } from "../protocols";
import { admit, type Admitted } from "./admit";
import { authenticate } from "./authenticate";
import type { Connection } from "./client-address";
import { newContext } from "./context";
import { emit } from "./events";
import { HEADER } from "./headers";
import { passthroughBody } from "./plan";
import { readJsonBody, validationError } from "./read-body";
import { resolve } from "./resolve";
import { errorResponse, toGatewayError } from "./respond";

/**
 * `POST /v1/messages/count_tokens` for every catalog model, through the same authenticate →
 * validate → resolve → admit steps as inference: the upstream's own count where its protocol has
 * a count call, else Turnpike's local tokenizer. A count generates nothing, so it takes a request
 * from the key's rpm and gives its token estimate back.
 */
export async function handleCountTokens(deps: GatewayDeps, request: Request, server?: Connection | null): Promise<Response> {
  const format = FORMATS.messages;
  const ctx = newContext(request, format, server, deps.config.trustedProxies);
  emit(deps.hooks, "onStart", ctx);
  let admitted: Admitted | undefined;
  try {
    const key = await authenticate(deps, ctx);
    const { value, size } = await readJsonBody(request, deps.config.maxBodyBytes);
    const checked = validateCountTokensRequest(value);
    if (!checked.ok) throw validationError(checked.issues);
    const target = resolve(deps, key, checked.value.model);
    admitted = await admit(deps, ctx, key, target.entry, size);
    const protocol = PROTOCOLS[target.entry.protocol];
    const headers = new Headers(format.idHeaders(ctx.id));
    headers.set(HEADER.upstream, target.upstream.simulated ? "simulator" : target.upstream.vendor);
    for (const [k, v] of Object.entries(admitted.limitHeaders)) headers.set(k, v);
    let inputTokens: number;
    // The pivot needs an output cap; counting ignores it.
    const pivot: MessagesRequest = { ...checked.value, max_tokens: 1 };
    if (!protocol.count) {
      inputTokens = deps.countPrompt(pivot);
      headers.set(HEADER.count, "local");
    } else {
      // The body the same request would be sent with, counted by the upstream.
      const body =
        format.passthroughProtocol === protocol.id
          ? passthroughBody(checked.value, target.entry.upstream_model)
          : (await protocol.fromPivot(pivot, target, deps.signatures)).body;
      const call = await protocol.count(target, body, request.headers);
      const res = await deps.fetch(call.url, { method: "POST", headers: call.headers, body: call.body });
      const text = await res.text();
      if (!res.ok) throw protocol.parseError(res.status, text, res.headers);
      inputTokens = protocol.readCount(JSON.parse(text)) ?? 0;
      headers.set(HEADER.count, "upstream");
    }
    admitted.settle(0);
    emit(deps.hooks, "onFinish", ctx, 200, undefined);
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify({ input_tokens: inputTokens }), { status: 200, headers });
  } catch (e) {
    admitted?.settle(0);
    const err = toGatewayError(e, deps.logger, ctx.id);
    emit(deps.hooks, "onFinish", ctx, err.status, undefined);
    return errorResponse(format, err, ctx.id);
  }
}
