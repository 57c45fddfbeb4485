import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { GatewayError } from "@turnpike/providers";
import type { GatewayDeps } from "../wiring/deps";
import { clientAddress, type Connection } from "../http/client-address";
import { parseJsonWithin, readBodyText } from "../request/read-body";
import type { Route } from "../http/route";
import { authenticate } from "../access/authenticate";
import { json, type Json } from "../openapi/operations";
import type { KeyRecord } from "../storage/store";
import type { McpGateway } from "../mcp/mcp-gateway";
import { jsonRpcError } from "../mcp/session-hosts";

/** Room for the JSON-RPC envelope and a tool call's other params around its arguments. */
const ENVELOPE_BYTES = 256 * 1024;

/** RFC 9728: where a client finds what protects `/mcp` (both the root and the path-suffixed form of the well-known URI). */
const METADATA_PATHS = ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"] as const;

/** The `initialize` request of a JSON-RPC message, if that is what it is. */
function initializeParams(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const m = body as { method?: unknown; params?: unknown }; // an object: checked just above
  if (m.method !== "initialize" || typeof m.params !== "object" || m.params === null) return undefined;
  return m.params as Record<string, unknown>; // an object: checked just above
}

/** The JSON-RPC method and id of a message (either undefined when the body is no such message). */
function methodOf(body: unknown): { method?: string; id?: string | number | null } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return {};
  const m = body as { method?: unknown; id?: unknown }; // an object: checked just above
  const id = typeof m.id === "string" || typeof m.id === "number" ? m.id : null;
  return { method: typeof m.method === "string" ? m.method : undefined, id };
}

/**
 * The era probe of the stateless MCP revision (2026-07-28, "Versioning: Backward Compatibility";
 * docs/mcp.md): a dual-era client first sends a modern request such as `server/discover` with no
 * session, and falls back to `initialize` on a 400 whose body is not one of the modern errors
 * (-32020 header mismatch, -32022 unsupported version, …). Turnpike serves the session-based
 * revisions, so that 400 is the answer the specification asks of it; it carries the probe's id
 * and names the versions to initialize with, and is logged as the request it is.
 */
const MODERN_PROBE = "server/discover";

/**
 * `/mcp`: the MCP Streamable HTTP endpoint (spec 2025-11-25, as the official SDK implements it),
 * and the protected-resource metadata that tells a spec-following client to send a Turnpike key
 * as its bearer token (docs/mcp.md).
 */
export function mcpRoutes(deps: GatewayDeps, mcp: McpGateway): Route[] {
  const maxBody = deps.config.mcp.maxArgumentBytes + ENVELOPE_BYTES;
  // From TURNPIKE_PUBLIC_URL only, never the request's Host: without it the metadata is not served
  // and the 401 names none (a forged Host must not point a client's discovery elsewhere).
  const publicUrl = deps.config.publicUrl;
  const challenge = publicUrl ? `Bearer resource_metadata="${publicUrl}${METADATA_PATHS[0]}"` : "Bearer";

  const refuse = (e: unknown): Response => {
    if (e instanceof GatewayError && e.status === 401) {
      deps.logger.warn(`mcp: refused without a valid key: ${e.message}`, {});
      return jsonRpcError(401, -32001, e.message, {
        "www-authenticate": challenge,
      });
    }
    if (e instanceof GatewayError) return jsonRpcError(e.status, -32000, e.message, e.headers ?? {});
    deps.logger.error("mcp: request failed", {}, e);
    return jsonRpcError(500, -32603, "Internal error of the gateway.");
  };

  /** The transport's own refusals (a bad message, a wrong header, an unknown session) get their log line. */
  const logRefusal = (res: Response, key: KeyRecord): Response => {
    if (res.status >= 400)
      deps.logger.warn(`mcp: answered ${res.status} (${res.statusText || "refused by the MCP transport"})`, {
        key_id: key.id,
      });
    return res;
  };

  const serve = async (request: Request, server: Connection | null): Promise<Response> => {
    let key: KeyRecord;
    try {
      key = await authenticate(deps, {
        request,
        address: () => clientAddress(server, request, deps.config.trustedProxies),
      });
    } catch (e) {
      return refuse(e);
    }
    try {
      const sessionId = request.headers.get("mcp-session-id");
      let body: unknown;
      if (request.method === "POST") {
        const text = await readBodyText(request, maxBody);
        try {
          // A large body is counted off the event loop first (http/json-census.ts).
          body = await parseJsonWithin(text, deps.config.maxBodyValues);
        } catch (e) {
          if (e instanceof GatewayError && e.status === 413) throw e;
          deps.logger.warn("mcp: a body that is not JSON", { key_id: key.id });
          return jsonRpcError(400, -32700, "Parse error: the body is not JSON.");
        }
        const init = initializeParams(body);
        if (init && !sessionId) return logRefusal(await mcp.hosts.initialize(request, body, init, key), key);
      }
      if (!sessionId && methodOf(body).method === MODERN_PROBE) {
        deps.logger.request({
          key_id: key.id,
          endpoint: "mcp",
          method: MODERN_PROBE,
          status: 400,
          client: request.headers.get("user-agent")?.slice(0, 120) ?? undefined,
        });
        return Response.json(
          {
            jsonrpc: "2.0",
            id: methodOf(body).id ?? null,
            error: {
              // JSON-RPC's Invalid Request: no modern error code, so the client falls back to `initialize`.
              code: -32600,
              message: `Bad Request: this server speaks the session-based MCP revisions (${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}); send initialize.`,
            },
          },
          { status: 400 },
        );
      }
      if (!sessionId) {
        deps.logger.warn(`mcp: a ${request.method} without a session id`, { key_id: key.id });
        return jsonRpcError(
          400,
          -32000,
          "Bad Request: send initialize first, then its Mcp-Session-Id header on every request.",
        );
      }
      return logRefusal(await mcp.hosts.handle(sessionId, request, body, key), key);
    } catch (e) {
      if (e instanceof GatewayError && e.status === 413) {
        deps.logger.warn(`mcp: a body over the limits (${maxBody} bytes, ${deps.config.maxBodyValues} JSON values)`, {
          key_id: key.id,
        });
        return jsonRpcError(413, -32000, e.message);
      }
      return refuse(e);
    }
  };

  // MCP's authorization specification asks the document to name at least one authorization
  // server. With sign-on configured, that is the company's OpenID provider (the issuer, whose
  // discovery document clients read); with none, Turnpike has no authorization server to name.
  const authorizationServers = deps.config.signOn ? [deps.config.signOn.issuer] : undefined;
  const metadata = () =>
    publicUrl
      ? Response.json({
          resource: `${publicUrl}/mcp`,
          ...(authorizationServers ? { authorization_servers: authorizationServers } : {}),
          bearer_methods_supported: ["header"],
          resource_name: "Turnpike MCP gateway",
          resource_documentation: `${publicUrl}/docs`,
        })
      : Response.json(
          {
            error: {
              message:
                "No protected-resource metadata: TURNPIKE_PUBLIC_URL is not set (the document names the gateway's public URL, never one taken from a request).",
              type: "not_found_error",
              code: "public_url_not_set",
            },
          },
          { status: 404 },
        );
  const handle = ({ request, server }: { request: Request; server: Connection | null }) => serve(request, server);

  return [
    // POST: messages; GET: the session's notification stream; DELETE: the session's end.
    {
      method: "POST",
      path: "/mcp",
      doc: {
        ...mcpOperation("An MCP JSON-RPC message (`initialize` opens a session and answers its `Mcp-Session-Id`)", {
          200: { description: "The JSON-RPC reply.", content: json({ type: "object" }) },
          202: { description: "A notification or reply, taken." },
        }),
        requestBody: {
          required: true,
          content: json({ type: "object", description: "One JSON-RPC message of MCP 2025-11-25." }),
        },
      },
      handle,
    },
    {
      method: "GET",
      path: "/mcp",
      doc: mcpOperation("The session's notification stream (list_changed)", {
        200: {
          description: "Server-sent events, each a JSON-RPC notification.",
          content: { "text/event-stream": { schema: { type: "string" } } },
        },
      }),
      handle,
    },
    {
      method: "DELETE",
      path: "/mcp",
      doc: mcpOperation("End the session", { 200: { description: "Ended." } }),
      handle,
    },
    { method: "GET", path: METADATA_PATHS[0], doc: PROTECTED_RESOURCE, handle: metadata },
    { method: "GET", path: METADATA_PATHS[1], doc: PROTECTED_RESOURCE, handle: metadata },
  ];
}

/** An operation of `/mcp` (its messages are JSON-RPC, described by the MCP specification, not here). */
function mcpOperation(summary: string, responses: Json): Json {
  const unauthorized = {
    description:
      'No valid key: `WWW-Authenticate: Bearer resource_metadata="<TURNPIKE_PUBLIC_URL>/.well-known/oauth-protected-resource"` (plain `Bearer` without a public URL).',
    headers: { "www-authenticate": { schema: { type: "string" } } },
    content: json({ type: "object" }),
  };
  const gone = {
    description: "No such session (ended, expired, or another key's): start a new one.",
    content: json({ type: "object" }),
  };
  return {
    tags: ["MCP"],
    summary,
    security: [{ bearer: [] }],
    responses: { ...responses, 401: unauthorized, 404: gone },
  };
}

/** RFC 9728 protected-resource metadata of `/mcp`. */
const PROTECTED_RESOURCE: Json = {
  tags: ["MCP"],
  summary: "What protects /mcp: a Turnpike key as bearer token (RFC 9728)",
  security: [],
  responses: {
    404: {
      description: "`TURNPIKE_PUBLIC_URL` is not set: the document is not served.",
      content: json({ type: "object" }),
    },
    200: {
      description: "The metadata document, built from `TURNPIKE_PUBLIC_URL`.",
      content: json({
        type: "object",
        required: ["resource"],
        properties: {
          resource: { type: "string" },
          authorization_servers: {
            type: "array",
            items: { type: "string" },
            description: "The sign-on provider's issuer URL, when sign-on is configured.",
          },
          bearer_methods_supported: { type: "array", items: { type: "string" } },
        },
      }),
    },
  },
};
