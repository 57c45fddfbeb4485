import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../log/logger";
import type { McpServerConfig } from "../config/mcp-config";

/** Which of an upstream's lists changed (its `notifications/*\/list_changed`). */
export type ListKind = "tools" | "prompts" | "resources";

/** Pages of one list read from an upstream before the rest is left out (a server that pages forever cannot hold a session). */
const MAX_PAGES = 50;

/**
 * This instance's connection to each configured upstream MCP server: one SDK client per server,
 * opened on first use and shared by every session (the operator's credentials, never the
 * client's). A connection that fails is dropped and opened afresh by the next call, so an
 * upstream that restarts is used again without a restart of the gateway.
 */
export class UpstreamPool {
  private readonly clients = new Map<string, Promise<Client>>();
  private readonly byName: Map<string, McpServerConfig>;

  constructor(
    readonly servers: readonly McpServerConfig[],
    private readonly opts: {
      fetch: typeof fetch;
      logger: Logger;
      version: string;
      onListChanged: (server: string, kind: ListKind) => void;
    },
  ) {
    this.byName = new Map(servers.map((s) => [s.name, s]));
  }

  has(server: string): boolean {
    return this.byName.has(server);
  }

  config(server: string): McpServerConfig | undefined {
    return this.byName.get(server);
  }

  private transport(s: McpServerConfig): Transport {
    switch (s.kind) {
      case "http":
        return new StreamableHTTPClientTransport(new URL(s.url), {
          requestInit: { headers: s.headers },
          fetch: this.opts.fetch,
          // The upstream's own notification stream: a few quick retries, then the next call reconnects.
          reconnectionOptions: {
            initialReconnectionDelay: 500,
            maxReconnectionDelay: 5000,
            reconnectionDelayGrowFactor: 2,
            maxRetries: 3,
          },
        });
      case "stdio":
        // The SDK gives the child only HOME, PATH, SHELL, TERM, USER and LOGNAME of the gateway's
        // environment, plus the configured `env`: none of the gateway's own secrets.
        return new StdioClientTransport({ command: s.command, args: s.args, env: s.env, stderr: "pipe" });
      default: {
        const never: never = s;
        throw new Error(`unknown MCP server kind ${JSON.stringify(never)}`);
      }
    }
  }

  /** The connected client of a server, connecting (with the server's timeout) when there is none. */
  client(server: string): Promise<Client> {
    const open = this.clients.get(server);
    if (open) return open;
    const s = this.byName.get(server);
    if (!s) return Promise.reject(new McpError(ErrorCode.InvalidParams, `No MCP server named "${server}"`));
    const connecting = (async () => {
      const client = new Client({ name: "turnpike", version: this.opts.version }, { capabilities: {} });
      const changed = (kind: ListKind) => () => {
        this.opts.onListChanged(server, kind);
        return Promise.resolve();
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, changed("tools"));
      client.setNotificationHandler(PromptListChangedNotificationSchema, changed("prompts"));
      client.setNotificationHandler(ResourceListChangedNotificationSchema, changed("resources"));
      client.onclose = () => this.forget(server, connecting);
      await client.connect(this.transport(s), { timeout: s.timeoutMs });
      return client;
    })();
    this.clients.set(server, connecting);
    connecting.catch((e) => {
      this.forget(server, connecting);
      this.opts.logger.warn(
        `MCP server "${server}" could not be reached: ${e instanceof Error ? e.message : String(e)}`,
        {},
      );
    });
    return connecting;
  }

  private forget(server: string, which: Promise<Client>): void {
    if (this.clients.get(server) !== which) return;
    this.clients.delete(server);
    which.then((c) => c.close()).catch(() => {});
  }

  /**
   * Runs one request on a server's client with the server's timeout; a failure that is not the
   * upstream's own MCP error (a dropped connection, a timeout) drops the connection, so the next
   * call starts a fresh one.
   */
  async run<T>(
    server: string,
    fn: (client: Client, options: RequestOptions) => Promise<T>,
    signal?: AbortSignal,
    retried = false,
  ): Promise<T> {
    const s = this.byName.get(server);
    if (!s) throw new McpError(ErrorCode.InvalidParams, `No MCP server named "${server}"`);
    const pending = this.client(server);
    try {
      const client = await withTimeout(pending, s.timeoutMs, server);
      return await fn(client, { timeout: s.timeoutMs, maxTotalTimeout: s.timeoutMs, signal });
    } catch (e) {
      const upstreamSaid =
        e instanceof McpError && e.code !== ErrorCode.RequestTimeout && e.code !== ErrorCode.ConnectionClosed;
      if (!upstreamSaid) this.forget(server, pending);
      // A 404 to a session request: the upstream restarted and forgot Turnpike's session (the
      // spec's signal to start a new one). The request was not run, so it is sent once more on a new session.
      if (!retried && e instanceof StreamableHTTPError && e.code === 404) return this.run(server, fn, signal, true);
      throw e;
    }
  }

  /** Every page of a list, up to {@link MAX_PAGES}. */
  async all<T>(
    server: string,
    page: (
      client: Client,
      cursor: string | undefined,
      options: RequestOptions,
    ) => Promise<{ items: T[]; nextCursor?: string }>,
  ): Promise<T[]> {
    return this.run(server, async (client, options) => {
      const out: T[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < MAX_PAGES; i++) {
        const r = await page(client, cursor, options);
        out.push(...r.items);
        cursor = r.nextCursor;
        if (!cursor) break;
      }
      return out;
    });
  }

  async close(): Promise<void> {
    const open = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(open.map((p) => p.then((c) => c.close()).catch(() => {})));
  }
}

/** Connecting has the server's timeout too: an upstream that accepts and never answers cannot hold a call. */
function withTimeout<T>(p: Promise<T>, ms: number, server: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new McpError(ErrorCode.RequestTimeout, `MCP server "${server}" did not answer within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
