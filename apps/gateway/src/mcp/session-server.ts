import type { GuardrailsConfig } from "../guardrails/policy";
import { policiesFor } from "../guardrails/policy";
import { GuardrailBlock, GuardrailRun } from "../guardrails/run";
import { redactArguments, restoreStrings } from "../guardrails/pivot";
import { guardMcpContent } from "../guardrails/surfaces";
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
  type ServerNotification,
  type ServerRequest,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { GatewayError } from "@turnpike/providers";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { KeyRecord } from "../storage/store";
import type { Logger } from "../log/logger";
import { CALL_STATUS, type CallMeter, type McpMethod, type McpOperation } from "./call-meter";
import type { McpConfig } from "../config/mcp-config";
import {
  MAX_NAME,
  nameProblem,
  namespaced,
  splitName,
  unwrapUri,
  upstreamNameOk,
  uriProblem,
  wrapUri,
} from "../tools/namespacing";
import type { ToolAllowList } from "../tools/tool-allow-list";
import type { UpstreamPool } from "./upstream-pool";

/** Turnpike's own MCP error codes (JSON-RPC leaves -32000 to -32099 to the server). */
export const MCP_ERROR = {
  rateLimited: -32029,
  tooLarge: -32013,
  budgetSpent: -32042,
  guardrailBlocked: -32043,
} as const;

/** What every session's server shares: the upstreams, the allow-lists, admission and the meter. */
export interface SessionServices {
  pool: UpstreamPool;
  allow: ToolAllowList;
  /** The key's admission (budgets, then rpm), as every request has; throws the refusal. */
  admit: (key: KeyRecord) => Promise<void>;
  meter: CallMeter;
  config: McpConfig;
  /** The config's guardrail policies: a key's that cover `mcp` read its calls' arguments and results. */
  guardrails: GuardrailsConfig;
  logger: Logger;
  version: string;
}

const bytesOf = (v: unknown): number => (v === undefined ? 0 : Buffer.byteLength(JSON.stringify(v)));

/** A tool or prompt name Turnpike does not offer this key: the same answer whether it exists or not. */
const unknownName = (kind: string, name: string) =>
  new McpError(ErrorCode.InvalidParams, `Unknown ${kind}: ${JSON.stringify(name.slice(0, 200))}`);

/** The request's headers as the SDK hands them over, for the trace. */
function headersOf(extra: RequestHandlerExtra<ServerRequest, ServerNotification>): Headers | undefined {
  const raw = extra.requestInfo?.headers;
  if (!raw) return undefined;
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) if (typeof v === "string") h.set(k, v);
  return h;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * One session's MCP server: the SDK's `Server`, answering from the upstreams. `key()` is the key
 * of the request being served (re-read on every request, so an allow-list changed by the admin
 * API applies at once). Upstream names, descriptions and schemas are passed on as data, never
 * read as instructions or used to choose a target; the only targets are the configured servers.
 *
 * Every request of every kind (calls, reads, gets, lists) takes the same steps: its name checked
 * against the alphabet (namespacing.ts) → the allow-list → admission (the key's and its team's
 * budgets, the key's rpm) → the upstream → one ledger row, one request line, one span and
 * bounded metrics (call-meter.ts). Nothing reaches an upstream before admission.
 */
export function sessionServer(s: SessionServices, key: () => KeyRecord): Server {
  const server = new Server(
    { name: "turnpike", version: s.version },
    {
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
    },
  );

  /** A name a client sent, checked against the alphabet before it is logged, stored or counted. */
  const checkName = (kind: string, name: string, problem: string | undefined): void => {
    if (!problem) return;
    s.meter.refusal("invalid_name", key().id, name);
    throw new McpError(
      ErrorCode.InvalidParams,
      `Invalid ${kind} name ${JSON.stringify(name.slice(0, 200))}: ${problem} (namespaced "<server>__<name>", at most ${MAX_NAME} characters of A-Z, a-z, 0-9, "_", "-", ".", "/" after the server).`,
    );
  };

  /**
   * Admits, runs and meters one request. `run` reaches the upstream only once admission let the
   * request in; its outcome becomes the ledger's status; the record is made exactly once.
   */
  const operate = async <T>(
    method: McpMethod,
    target: { server: string | undefined; name: string | undefined; bytesIn: number },
    extra: Extra,
    run: (op: McpOperation) => Promise<T>,
  ): Promise<T> => {
    const k = key();
    try {
      await s.admit(k);
    } catch (e) {
      throw admissionError(s, k, target.name ?? method, e);
    }
    const op: McpOperation = {
      method,
      keyId: k.id,
      server: target.server,
      name: target.name,
      startedAt: s.meter.now(),
      bytesIn: target.bytesIn,
      bytesOut: 0,
      status: CALL_STATUS.ok,
      answered: false,
      aborted: false,
      headers: headersOf(extra),
    };
    try {
      const result = await run(op);
      op.answered = true;
      if (op.bytesOut === 0) op.bytesOut = bytesOf(result);
      return result;
    } catch (e) {
      if (extra.signal.aborted) op.status = CALL_STATUS.cancelled;
      else if (op.status === CALL_STATUS.ok) {
        const timedOut = e instanceof McpError && e.code === ErrorCode.RequestTimeout;
        op.status = timedOut ? CALL_STATUS.timedOut : CALL_STATUS.upstreamFailed;
        op.answered ||= e instanceof McpError && !timedOut && e.code !== ErrorCode.ConnectionClosed;
      }
      throw target.server ? upstreamError(target.server, e) : e;
    } finally {
      op.aborted = extra.signal.aborted;
      s.meter.record(op);
    }
  };

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
  /** An upstream's own name outside the alphabet is not offered (it could not be called, stored or counted). */
  const offerable = <T extends { name: string }>(server: string, kind: string, items: T[]): T[] =>
    items.filter((x) => {
      if (upstreamNameOk(x.name)) return true;
      s.logger.warn(
        `MCP server "${server}" lists a ${kind} whose name is left out: ${JSON.stringify(x.name.slice(0, 200))}`,
        {},
      );
      return false;
    });
  // Servers none of whose names the key may use are not even asked.
  const mayListFrom = (name: string) => s.allow.allowsSomethingOf(key(), name);
  const supports = (name: string, cap: "prompts" | "resources") =>
    s.pool.run(name, async (c) => c.getServerCapabilities()?.[cap] !== undefined);

  /** The key's guardrails for one operation: only a key some policy of which reads MCP has any (no cost otherwise). */
  const mcpGuard = (k: KeyRecord): GuardrailRun | undefined => {
    const policies = s.guardrails.policies.size ? policiesFor(s.guardrails, k) : [];
    return policies.some((p) => p.applyTo.has("mcp")) ? new GuardrailRun(policies) : undefined;
  };
  /** `f` under `guard`: a block becomes the MCP error -32043 and the operation's record status 400. */
  const guarded = <T>(op: { status: number; guard?: GuardrailRun | undefined }, guard: GuardrailRun, f: () => T): T => {
    op.guard = guard;
    try {
      return f();
    } catch (e) {
      if (!(e instanceof GuardrailBlock)) throw e;
      op.status = CALL_STATUS.blocked;
      throw new McpError(MCP_ERROR.guardrailBlocked, e.message);
    }
  };

  server.setRequestHandler(ListToolsRequestSchema, (_req, extra) =>
    operate("tools/list", { server: undefined, name: undefined, bytesIn: 0 }, extra, async () => {
      const tools = await gather("tools", mayListFrom, (name) =>
        s.pool.all<Tool>(name, async (c, cursor, o) => {
          const r = await c.listTools(cursor ? { cursor } : {}, o);
          const ok = offerable(name, "tool", r.tools);
          s.meter.listed(
            name,
            ok.map((t) => t.name),
          );
          return { items: ok.map((t) => ({ ...t, name: namespaced(name, t.name) })), nextCursor: r.nextCursor };
        }),
      );
      const k = key();
      return { tools: tools.filter((t) => s.allow.allows(k, t.name)) };
    }),
  );

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const k = key();
    checkName("tool", req.params.name, nameProblem(req.params.name));
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
    const guard = mcpGuard(k);
    return operate("tools/call", { server: target.server, name: target.name, bytesIn }, extra, async (op) => {
      const args = guard
        ? guarded(op, guard, () => redactArguments(guard, req.params.arguments))
        : req.params.arguments;
      const called = await s.pool.run(
        target.server,
        (c, o) => c.callTool({ ...req.params, arguments: args, name: target.name }, undefined, o),
        extra.signal,
      );
      const result = guard ? restoreStrings(guard, called) : called;
      op.answered = true;
      op.bytesOut = bytesOf(result);
      if (op.bytesOut > s.config.maxResultBytes) {
        op.status = CALL_STATUS.resultTooLarge;
        throw new McpError(
          MCP_ERROR.tooLarge,
          `The tool's result is ${op.bytesOut} bytes of JSON; at most ${s.config.maxResultBytes} are passed on.`,
        );
      }
      // The SDK's client types a result loosely (it also reads the 2024 `toolResult` form); this is the current shape.
      return result as CallToolResult;
    });
  });

  server.setRequestHandler(ListPromptsRequestSchema, (_req, extra) =>
    operate("prompts/list", { server: undefined, name: undefined, bytesIn: 0 }, extra, async () => {
      const prompts = await gather("prompts", mayListFrom, async (name) =>
        (await supports(name, "prompts"))
          ? s.pool.all<Prompt>(name, async (c, cursor, o) => {
              const r = await c.listPrompts(cursor ? { cursor } : {}, o);
              return {
                items: offerable(name, "prompt", r.prompts).map((p) => ({ ...p, name: namespaced(name, p.name) })),
                nextCursor: r.nextCursor,
              };
            })
          : [],
      );
      const k = key();
      return { prompts: prompts.filter((p) => s.allow.allows(k, p.name)) };
    }),
  );

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    checkName("prompt", req.params.name, nameProblem(req.params.name));
    const target = splitName(req.params.name);
    if (!target || !s.pool.has(target.server) || !s.allow.allows(key(), req.params.name)) {
      s.meter.refusal("not_allowed", key().id, req.params.name);
      throw unknownName("prompt", req.params.name);
    }
    // A prompt's arguments are read like a tool call's, and what comes back like a resource (docs/guardrails.md, "MCP").
    const guard = mcpGuard(key());
    return operate(
      "prompts/get",
      { server: target.server, name: target.name, bytesIn: bytesOf(req.params.arguments) },
      extra,
      async (op) => {
        const args = guard
          ? guarded(op, guard, () => redactArguments(guard, req.params.arguments))
          : req.params.arguments;
        // A prompt's arguments are strings, and redactArguments keeps every value's type.
        const asked = { ...req.params, ...(args ? { arguments: args as Record<string, string> } : {}) };
        const got = await s.pool.run(
          target.server,
          (c, o) => c.getPrompt({ ...asked, name: target.name }, o),
          extra.signal,
        );
        op.answered = true;
        return guard ? guarded(op, guard, () => guardMcpContent(guard, got)) : got;
      },
    );
  });

  const mayReadFrom = (name: string) => s.allow.allowsServer(key(), name);
  server.setRequestHandler(ListResourcesRequestSchema, (_req, extra) =>
    operate("resources/list", { server: undefined, name: undefined, bytesIn: 0 }, extra, async () => ({
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
    })),
  );

  server.setRequestHandler(ListResourceTemplatesRequestSchema, (_req, extra) =>
    operate("resources/templates/list", { server: undefined, name: undefined, bytesIn: 0 }, extra, async () => ({
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
    })),
  );

  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    checkName("resource", req.params.uri, uriProblem(req.params.uri));
    const target = unwrapUri(req.params.uri);
    if (!target || !s.pool.has(target.server) || !mayReadFrom(target.server)) {
      s.meter.refusal("not_allowed", key().id, req.params.uri);
      throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${JSON.stringify(req.params.uri.slice(0, 200))}`);
    }
    const guard = mcpGuard(key());
    return operate("resources/read", { server: target.server, name: undefined, bytesIn: 0 }, extra, async (op) => {
      const read = await s.pool.run(
        target.server,
        (c, o) => c.readResource({ ...req.params, uri: target.uri }, o),
        extra.signal,
      );
      op.answered = true;
      // A resource's text is read by the key's policies covering `mcp` (docs/guardrails.md, "MCP").
      const r = guard ? guarded(op, guard, () => guardMcpContent(guard, read)) : read;
      return { ...r, contents: r.contents.map((c) => ({ ...c, uri: wrapUri(target.server, c.uri) })) };
    });
  });

  return server;
}

/** A refusal of admission as an MCP error: a spent budget, or the rpm (with when to retry). */
function admissionError(s: SessionServices, k: KeyRecord, name: string, e: unknown): unknown {
  if (!(e instanceof GatewayError)) return e;
  if (e.status === 402) {
    s.meter.refusal("budget", k.id, name);
    return new McpError(MCP_ERROR.budgetSpent, e.message);
  }
  if (e.status === 429) {
    s.meter.refusal("rate_limited", k.id, name);
    const retry = Number(e.headers?.["retry-after"] ?? 0);
    return new McpError(
      MCP_ERROR.rateLimited,
      `Rate limit: this key may make ${k.rpm} requests a minute; retry after ${retry} s.`,
      { retry_after_s: retry },
    );
  }
  return new McpError(ErrorCode.InternalError, e.message);
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
