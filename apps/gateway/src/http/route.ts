import { Elysia } from "elysia";
import type { Connection } from "./client-address";
import { clientRequestId, keepRequestId } from "./request-id";

export type Method = "GET" | "POST" | "PATCH" | "DELETE" | "HEAD";

/** What a handler gets of one call: the request, the connection, and the path's parameters by name. */
export interface RouteCall {
  request: Request;
  server: Connection | null;
  params: Readonly<Record<string, string>>;
}

/** A Response, or nothing once the connection was taken over as a WebSocket. */
export type Handler = (call: RouteCall) => Response | undefined | Promise<Response | undefined>;

/** One operation of the description document (OpenAPI 3.1), as plain JSON. */
export type Operation = Record<string, unknown>;

/**
 * One route, declared once: the server is built from it (routes/table.ts) and so is the
 * description document (openapi/document.ts).
 */
export interface Route {
  method: Method;
  /** As the description document writes it: `/v1/responses/{id}`. */
  path: string;
  /** The path's last parameter takes the rest of the path, slashes included (a model id, a file). */
  rest?: true;
  /** Its operation in the description document; none for a probe or an alias the document leaves out. */
  doc?: Operation;
  /**
   * Also served from Bun's router, skipping Elysia's per-request machinery (about 4 µs of CPU a
   * request): the inference routes, which use none of it.
   */
  direct?: true;
  handle: Handler;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** The route's path in the router's syntax: `{id}` as `:id`, a rest parameter as `*`. */
export function routerPath(route: Pick<Route, "path" | "rest">): string {
  if (route.rest) return route.path.replace(/\{\w+\}$/, "*");
  return route.path.replace(/\{(\w+)\}/g, ":$1");
}

/** The name of a rest route's last parameter (the router calls it `*`). */
function restName(path: string): string {
  return /\{(\w+)\}$/.exec(path)?.[1] ?? "*";
}

/**
 * A reply with the caller's own well-formed `x-request-id` kept (http/request-id.ts); a request
 * without one gets its reply as it is, with no promise added.
 */
function keeping(
  request: Request,
  reply: Response | undefined | Promise<Response | undefined>,
): Response | undefined | Promise<Response | undefined> {
  const kept = clientRequestId(request);
  if (kept === undefined) return reply;
  return reply instanceof Promise ? reply.then((r) => keepRequestId(kept, r)) : keepRequestId(kept, reply);
}

/**
 * Every route on an Elysia instance of its own, to `use` in an app. Bodies are never parsed by
 * Elysia: a handler reads its own (against the size limit, answering in the caller's format).
 */
export function mount(routes: readonly Route[], name = "routes") {
  const app = new Elysia({ name });
  for (const route of routes) {
    const rest = route.rest ? restName(route.path) : undefined;
    app.route(
      route.method,
      routerPath(route),
      ({ request, server, params }) => {
        // The router's parameters of a path it matched: strings by name, `*` for the rest.
        const named = params as Record<string, string>;
        return keeping(
          request,
          route.handle({ request, server, params: rest ? { ...named, [rest]: named["*"] ?? "" } : named }),
        );
      },
      { parse: "none" },
    );
  }
  return app;
}

/**
 * The `direct` routes as Bun's router takes them (`serve.routes`). `before` runs first and may
 * answer instead (the oversized-headers check Elysia's hook does for its own routes).
 */
export function directRoutes(routes: readonly Route[], before: (request: Request) => Response | undefined) {
  const out: Record<
    string,
    Partial<
      Record<Method, (request: Request, server: Connection) => Response | undefined | Promise<Response | undefined>>
    >
  > = {};
  for (const route of routes) {
    if (!route.direct) continue;
    if (route.rest || route.path.includes("{"))
      throw new Error(`${route.method} ${route.path}: only a fixed path can be served directly`);
    const handle = route.handle;
    (out[route.path] ??= {})[route.method] = (request, server) =>
      before(request) ?? keeping(request, handle({ request, server, params: NO_PARAMS }));
  }
  return out;
}
