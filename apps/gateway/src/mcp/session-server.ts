import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { LimiterStore } from "../limits/limiter-store";
import type { KeyRecord } from "../storage/store";
import type { Logger } from "../telemetry/logger";
import { CALL_STATUS, type CallMeter, type ToolCall } from "./call-meter";
import type { McpConfig } from "./mcp-config";
import { namespaced, splitName, unwrapUri, wrapUri } from "./namespacing";
import type { ToolAllowList } from "./tool-allow-list";
import type { UpstreamPool } from "./upstream-pool";

/** Turnpike's own MCP error codes (JSON-RPC leaves -32000 to -32099 to the server). */
export const MCP_ERROR = { rateLimited: -32029, tooLarge: -32013 } as const;

/** What every session's server shares: the upstreams, the allow-lists, the limits and the meter. */
export interface SessionServices {
  pool: UpstreamPool;
  allow: ToolAllowList;
  limiter: LimiterStore;
  meter: CallMeter;
  config: McpConfig;
  logger: Logger;
  version: string;
}

const bytesOf = (v: unknown): number => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v)));

/** A tool or prompt name Turnpike does not offer this key: the same answer whether it exists or not. */
const unknownName = (kind: string, name: string) =>
  new McpError(ErrorCode.InvalidParams, `Unknown ${kind}: ${JSON.stringify(name.slice(0, 200))}`);

/**
 * One session's MCP server: the SDK's `Server`, answering from the upstreams. `key()` is the key
 * of the request being served (re-read on every request, so an allow-list changed by the admin
 * API applies at once). Upstream names, descriptions and schemas are passed on as data, never
 * read as instructions or used to choose a target; the only targets are the configured servers.
 */
export function sessionServer(s: SessionServices, key: () => KeyRecord): Server {
  const server = new Server(
    { name: "turnpike", version: s.version },
    {
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
    },
  );

  /** Every server this key may see something of, with `list` run on each; a server that fails is left out (and logged). */
  const gather = async <T>(
    kind: string,
    wanted: (name: string) => boolean,
    list: (name: string) => Promise<T[]>,
  ): Promise<T[]> => {
    const names = s.pool.servers.map((c) => c.name).filter(wanted);
    const lists = await Promise.all(
      names.map((n) =>
        list(n).catch((e: unknown) => {
          s.logger.warn(
            `MCP server "${n}" did not list its ${kind}: ${e instanceof Error ? e.message : String(e)}`,
            {},
          );
          return [];
        }),
      ),
    );
    return lists.flat();
  };
  // Servers none of whose names the key may use are not even asked.
  const mayListFrom = (name: string) => s.allow.allowsSomethingOf(key(), name);
  const supports = (name: string, cap: "prompts" | "resources") =>
    s.pool.run(name, async (c) => c.getServerCapabilities()?.[cap] !== undefined);

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const tools = await gather("tools", mayListFrom, (name) =>
      s.pool.all<Tool>(name, async (c, cursor, o) => {
        const r = await c.listTools(cursor ? { cursor } : {}, o);
        return { items: r.tools.map((t) => ({ ...t, name: namespaced(name, t.name) })), nextCursor: r.nextCursor };
      }),
    );
    const k = key();
    return { tools: tools.filter((t) => s.allow.allows(k, t.name)) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const k = key();
    const target = splitName(req.params.name);
    if (!target || !s.pool.has(target.server) || !s.allow.allows(k, req.params.name)) {
      s.meter.refusal("not_allowed", k.id, req.params.name);
      throw unknownName("tool", req.params.name);
    }
    const bytesIn = bytesOf(req.params.arguments);
    if (bytesIn > s.config.maxArgumentBytes) {
      s.meter.refusal("too_large", k.id, req.params.name);
      throw new McpError(
        MCP_ERROR.tooLarge,
        `The tool's arguments are ${bytesIn} bytes of JSON; at most ${s.config.maxArgumentBytes} are accepted.`,
      );
    }
    // Each tool call is a request against the key's rpm, in the same bucket as its model calls.
    const [admission] = await s.limiter.admit([{ bucket: k.id, limits: { rpm: k.rpm, tpm: null } }], 0);
    if (admission && !admission.ok) {
      s.meter.refusal("rate_limited", k.id, req.params.name);
      throw new McpError(
        MCP_ERROR.rateLimited,
        `Rate limit: this key may make ${k.rpm} requests a minute; retry after ${admission.retryAfterS} s.`,
        { retry_after_s: admission.retryAfterS },
      );
    }
    const call: ToolCall = {
      keyId: k.id,
      server: target.server,
      tool: target.name,
      startedAt: s.meter.now(),
      bytesIn,
      bytesOut: 0,
      status: CALL_STATUS.ok,
      answered: false,
      aborted: false,
    };
    try {
      const result = await s.pool.run(
        target.server,
        (c, o) => c.callTool({ ...req.params, name: target.name }, undefined, o),
        extra.signal,
      );
      call.answered = true;
      call.bytesOut = bytesOf(result);
      if (call.bytesOut > s.config.maxResultBytes) {
        call.status = CALL_STATUS.resultTooLarge;
        throw new McpError(
          MCP_ERROR.tooLarge,
          `The tool's result is ${call.bytesOut} bytes of JSON; at most ${s.config.maxResultBytes} are passed on.`,
        );
      }
      // The SDK's client types a result loosely (it also reads the 2024 `toolResult` form); this is the current shape.
      return result as CallToolResult;
    } catch (e) {
      if (extra.signal.aborted) call.status = CALL_STATUS.cancelled;
      else if (call.status === CALL_STATUS.ok) {
        const timedOut = e instanceof McpError && e.code === ErrorCode.RequestTimeout;
        call.status = timedOut ? CALL_STATUS.timedOut : CALL_STATUS.upstreamFailed;
        call.answered ||= e instanceof McpError && !timedOut && e.code !== ErrorCode.ConnectionClosed;
      }
      throw upstreamError(target.server, e);
    } finally {
      call.aborted = extra.signal.aborted;
      s.meter.record(call);
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const prompts = await gather("prompts", mayListFrom, async (name) =>
      (await supports(name, "prompts"))
        ? s.pool.all<Prompt>(name, async (c, cursor, o) => {
            const r = await c.listPrompts(cursor ? { cursor } : {}, o);
            return {
              items: r.prompts.map((p) => ({ ...p, name: namespaced(name, p.name) })),
              nextCursor: r.nextCursor,
            };
          })
        : [],
    );
    const k = key();
    return { prompts: prompts.filter((p) => s.allow.allows(k, p.name)) };
  });

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const target = splitName(req.params.name);
    if (!target || !s.pool.has(target.server) || !s.allow.allows(key(), req.params.name))
      throw unknownName("prompt", req.params.name);
    try {
      return await s.pool.run(
        target.server,
        (c, o) => c.getPrompt({ ...req.params, name: target.name }, o),
        extra.signal,
      );
    } catch (e) {
      throw upstreamError(target.server, e);
    }
  });

  const mayReadFrom = (name: string) => s.allow.allowsServer(key(), name);
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: await gather("resources", mayReadFrom, async (name) =>
      (await supports(name, "resources"))
        ? s.pool.all<Resource>(name, async (c, cursor, o) => {
            const r = await c.listResources(cursor ? { cursor } : {}, o);
            return {
              items: r.resources.map((x) => ({ ...x, uri: wrapUri(name, x.uri), name: namespaced(name, x.name) })),
              nextCursor: r.nextCursor,
            };
          })
        : [],
    ),
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: await gather("resource templates", mayReadFrom, async (name) =>
      (await supports(name, "resources"))
        ? s.pool.all<ResourceTemplate>(name, async (c, cursor, o) => {
            const r = await c.listResourceTemplates(cursor ? { cursor } : {}, o);
            return {
              items: r.resourceTemplates.map((x) => ({
                ...x,
                uriTemplate: wrapUri(name, x.uriTemplate),
                name: namespaced(name, x.name),
              })),
              nextCursor: r.nextCursor,
            };
          })
        : [],
    ),
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    const target = unwrapUri(req.params.uri);
    if (!target || !s.pool.has(target.server) || !mayReadFrom(target.server))
      throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${JSON.stringify(req.params.uri.slice(0, 200))}`);
    try {
      const r = await s.pool.run(
        target.server,
        (c, o) => c.readResource({ ...req.params, uri: target.uri }, o),
        extra.signal,
      );
      return { ...r, contents: r.contents.map((c) => ({ ...c, uri: wrapUri(target.server, c.uri) })) };
    } catch (e) {
      throw upstreamError(target.server, e);
    }
  });

  return server;
}

/**
 * An upstream failure as the client sees it: the upstream's own MCP error as it was (its code
 * and message), a timeout as the SDK's timeout code, anything else (refused connection, broken
 * stream) as an internal error naming the server and not its address.
 */
function upstreamError(server: string, e: unknown): McpError {
  if (e instanceof McpError) {
    if (e.code === ErrorCode.RequestTimeout)
      return new McpError(ErrorCode.RequestTimeout, `MCP server "${server}" did not answer in time`);
    return e;
  }
  return new McpError(ErrorCode.InternalError, `MCP server "${server}" could not be reached`);
}
