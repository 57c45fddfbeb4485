import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { FORMATS } from "../formats";
import { errorResponse, toGatewayError } from "../request/respond";
import type { Handler, Route } from "../http/route";
import { authenticate } from "../access/authenticate";
import { errors, idParam, INFERENCE_KEYS, ok, query, ref } from "../openapi/operations";
import { newContext } from "../request/context";
import type { KeyRecord } from "../storage/store";
import type { StoredResponse } from "../vocabulary/stored-response";
import { isCleanId } from "../storage/clean-text";
import { admitRead } from "../limits/admit-read";

function notFound(id: string): GatewayError {
  return new GatewayError({
    status: 404,
    type: "invalid_request_error",
    code: "not_found",
    param: "response_id",
    message: `Response with id '${id.slice(0, 100)}' not found.`,
  });
}

/** A route over one stored response of the calling key (another key's, or an expired one, is a 404). */
function storedRoute(
  deps: GatewayDeps,
  act: (stored: StoredResponse, key: KeyRecord, url: URL) => Promise<unknown> | unknown,
): Handler {
  return async ({ request, params, server }) => {
    const ctx = newContext(request, FORMATS.responses, server, deps.config.trustedProxies);
    const id = params.id ?? "";
    try {
      const key = await authenticate(deps, ctx);
      const limitHeaders = await admitRead(deps, FORMATS.responses, key);
      // An id with bytes no stored id has (a NUL, a lone surrogate, thousands of characters) names nothing.
      const stored = isCleanId(id)
        ? await deps.responses.get(key.id, id, new Date(deps.now()).toISOString())
        : undefined;
      if (!stored) throw notFound(id);
      return Response.json(await act(stored, key, new URL(request.url)), {
        headers: { ...limitHeaders, ...FORMATS.responses.idHeaders(ctx.id) },
      });
    } catch (e) {
      return errorResponse(FORMATS.responses, toGatewayError(e, deps.logger, ctx.id), {
        logger: deps.logger,
        request,
        requestId: ctx.id,
      });
    }
  };
}

const badParam = (param: string, message: string) =>
  new GatewayError({ status: 400, type: "invalid_request_error", param, message });

/** Input items as the list endpoint shows them: each with an id (`item_<n>` where it had none). */
function listItems(stored: StoredResponse, order: "asc" | "desc"): Record<string, unknown>[] {
  const items = stored.input_items.map((raw, i) => {
    // Input items are objects: they passed the request's validation before they were stored.
    const item = raw as Record<string, unknown>;
    return {
      id: typeof item.id === "string" ? item.id : `item_${String(i).padStart(4, "0")}`,
      ...(item.type ? {} : { type: "message" }),
      ...item,
    };
  });
  // Newest first unless asked otherwise, as the format's clients expect.
  return order === "asc" ? items : items.reverse();
}

const STORED_ID = idParam("A stored response's id (`resp_…`), of the calling key.");

/**
 * The stored responses of the calling key (the Responses format): `GET /v1/responses/{id}`,
 * `GET /v1/responses/{id}/input_items`, `DELETE /v1/responses/{id}`.
 */
export function storedResponseRoutes(deps: GatewayDeps): Route[] {
  return [
    {
      method: "GET",
      path: "/v1/responses/{id}",
      doc: {
        tags: ["Responses"],
        summary: "Get a stored response",
        security: INFERENCE_KEYS,
        parameters: [STORED_ID],
        responses: { ...ok("The stored response.", ref("ResponsesResponse")), ...errors("ChatErrorBody") },
      },
      handle: storedRoute(deps, (stored) => stored.response),
    },
    {
      method: "GET",
      path: "/v1/responses/{id}/input_items",
      doc: {
        tags: ["Responses"],
        summary: "List a stored response's input items",
        security: INFERENCE_KEYS,
        parameters: [
          STORED_ID,
          query("order", "`desc` (newest first, the default) or `asc`.", { type: "string", enum: ["asc", "desc"] }),
          query("limit", "Items per page, 1 to 100 (default 20).", { type: "integer", minimum: 1, maximum: 100 }),
          query("after", "The id of the item the page starts after.", { type: "string" }),
          query(
            "before",
            "The id of the item the page ends before (without `after`: the `limit` items just before it).",
            { type: "string" },
          ),
        ],
        responses: { ...ok("A page of input items.", ref("ResponsesInputItemList")), ...errors("ChatErrorBody") },
      },
      handle: storedRoute(deps, (stored, _key, url) => {
        const q = url.searchParams;
        const order = q.get("order") ?? "desc";
        if (order !== "asc" && order !== "desc")
          throw badParam("order", `order: asc or desc, got ${JSON.stringify(order.slice(0, 100))}`);
        const all = listItems(stored, order);
        const limit = q.get("limit") === null ? 20 : Number(q.get("limit"));
        if (!Number.isInteger(limit) || limit < 1 || limit > 100)
          throw badParam(
            "limit",
            `limit: a whole number from 1 to 100, got ${JSON.stringify(q.get("limit")?.slice(0, 100))}`,
          );
        // The items strictly between `after` and `before` (each an item id of this list, in this order).
        const at = (name: "after" | "before") => {
          const id = q.get(name);
          if (id === null) return undefined;
          const i = all.findIndex((item) => item.id === id);
          if (i === -1)
            throw badParam(name, `${name}: no input item ${JSON.stringify(id.slice(0, 100))} in this response`);
          return i;
        };
        const after = at("after");
        const before = at("before");
        const from = after === undefined ? 0 : after + 1;
        const to = before ?? all.length;
        // A page: the first `limit` after `after`, or with only `before`, the `limit` just before it.
        const start = before !== undefined && after === undefined ? Math.max(from, to - limit) : from;
        const end = Math.min(to, start + limit);
        const data = all.slice(start, Math.max(start, end));
        const hasMore = before !== undefined && after === undefined ? start > from : end < to;
        return {
          object: "list",
          data,
          first_id: data[0]?.id ?? null,
          last_id: data.at(-1)?.id ?? null,
          has_more: hasMore,
        };
      }),
    },
    {
      method: "DELETE",
      path: "/v1/responses/{id}",
      doc: {
        tags: ["Responses"],
        summary: "Delete a stored response",
        security: INFERENCE_KEYS,
        parameters: [STORED_ID],
        responses: { ...ok("Deleted.", ref("ResponsesDeleted")), ...errors("ChatErrorBody") },
      },
      handle: storedRoute(deps, async (stored, key) => {
        await deps.responses.delete(key.id, stored.id);
        return { id: stored.id, object: "response", deleted: true };
      }),
    },
  ];
}
