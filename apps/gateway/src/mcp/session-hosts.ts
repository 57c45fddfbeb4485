import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { KeyRecord } from "../storage/store";
import type { Logger } from "../log/logger";
import type { McpSessionStore } from "../tools/session-store";
import type { ListKind } from "./upstream-pool";

/** One session as this instance holds it: the SDK's server and transport, and the key of the request in hand. */
interface Host {
  id: string;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  key: KeyRecord;
  lastUsed: number;
}

/** A session idle this long is let go by this instance (its record stays in the store: any instance takes it up again). */
const IDLE_MS = 30 * 60_000;

/** A JSON-RPC error reply with no id (what the transport itself answers for a bad session). */
export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}

/**
 * The MCP sessions this instance serves. A session starts on whichever instance gets its
 * `initialize`; its record (key and initialize params) goes to the session store. A request of
 * a session this instance does not hold is served by taking the session up: a fresh server and
 * transport are given the same session id and the recorded `initialize` replayed to them, so
 * they are in the state the first instance's were. Everything else a session needs (upstream
 * connections, limits, the ledger) is shared already, so nothing else has to move.
 */
export class SessionHosts {
  private readonly hosts = new Map<string, Promise<Host>>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    private readonly store: McpSessionStore,
    private readonly newServer: (key: () => KeyRecord) => Server,
    private readonly logger: Logger,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref?.();
  }

  private open(id: string | undefined, key: KeyRecord): { host: Host; ready: Promise<void> } {
    const transport = new WebStandardStreamableHTTPServerTransport({
      // A new session gets a fresh random id; a session taken up keeps its own.
      sessionIdGenerator: () => id ?? crypto.randomUUID(),
      // One JSON reply per request: nothing of a call is lost when a balancer moves the next request elsewhere.
      enableJsonResponse: true,
      onsessionclosed: (sid) => this.forget(sid, true),
    });
    const host: Host = { id: id ?? "", key, lastUsed: Date.now(), transport, server: this.newServer(() => host.key) };
    return { host, ready: host.server.connect(transport) };
  }

  /** A new session from an `initialize` request: answered by the SDK, then recorded for every instance. */
  async initialize(request: Request, body: unknown, init: Record<string, unknown>, key: KeyRecord): Promise<Response> {
    const { host, ready } = this.open(undefined, key);
    await ready;
    const res = await host.transport.handleRequest(request, { parsedBody: body });
    const id = host.transport.sessionId;
    if (id && res.ok) {
      host.id = id;
      await this.store.save(id, { key_id: key.id, initialize: init });
      this.hosts.set(id, Promise.resolve(host));
    } else {
      await host.server.close().catch(() => {});
    }
    return res;
  }

  /** Any other request of a session: here, or taken up from the store; a 404 when the store has no such session for this key. */
  async handle(id: string, request: Request, body: unknown, key: KeyRecord): Promise<Response> {
    const record = await this.store.load(id);
    if (!record || record.key_id !== key.id) {
      // Gone (deleted, expired) or another key's: the same answer, so a session id tells nothing.
      if (record === undefined) void this.forget(id, false);
      return jsonRpcError(404, -32001, "Session not found: start a new one with initialize.");
    }
    let pending = this.hosts.get(id);
    if (!pending) {
      pending = this.takeUp(id, record.initialize, key);
      this.hosts.set(id, pending);
      pending.catch(() => this.hosts.delete(id));
    }
    const host = await pending;
    host.key = key;
    host.lastUsed = Date.now();
    return host.transport.handleRequest(request, body === undefined ? undefined : { parsedBody: body });
  }

  private async takeUp(id: string, init: Record<string, unknown>, key: KeyRecord): Promise<Host> {
    const { host, ready } = this.open(id, key);
    await ready;
    const post = (message: unknown, withSession: boolean) =>
      host.transport.handleRequest(
        new Request("http://turnpike.internal/mcp", {
          method: "POST",
          headers: {
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
            ...(withSession ? { "mcp-session-id": id } : {}),
          },
          body: JSON.stringify(message),
        }),
      );
    const replay = await post({ jsonrpc: "2.0", id: "turnpike-take-up", method: "initialize", params: init }, false);
    await replay.text();
    if (!replay.ok || host.transport.sessionId !== id)
      throw new Error(`taking up MCP session ${id} failed: ${replay.status}`);
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, true)).text();
    this.logger.info("mcp session taken up from the session store", { key_id: key.id });
    return host;
  }

  /**
   * Lets a session go here, and from the store too when it ended (`everywhere`): the transport
   * waits for that before it answers the client's DELETE, so no instance takes the session up
   * after its end was acknowledged.
   */
  private async forget(id: string, everywhere: boolean): Promise<void> {
    const pending = this.hosts.get(id);
    this.hosts.delete(id);
    pending?.then((h) => h.server.close()).catch(() => {});
    if (everywhere)
      await this.store
        .remove(id)
        .catch((e) => this.logger.warn("mcp session not removed from the session store", { reason: String(e) }));
  }

  /** An upstream's list changed: every session here is told (those with a notification stream open receive it). */
  listChanged(kind: ListKind): void {
    for (const pending of this.hosts.values()) {
      void pending
        .then((h) => {
          switch (kind) {
            case "tools":
              return h.server.sendToolListChanged();
            case "prompts":
              return h.server.sendPromptListChanged();
            case "resources":
              return h.server.sendResourceListChanged();
            default: {
              const never: never = kind;
              throw new Error(`unknown list ${String(never)}`);
            }
          }
        })
        .catch(() => {});
    }
  }

  private sweep(): void {
    const cutoff = Date.now() - IDLE_MS;
    for (const [id, pending] of this.hosts) {
      void pending.then(
        (h) => {
          if (h.lastUsed < cutoff) void this.forget(id, false);
        },
        () => {},
      );
    }
  }

  get size(): number {
    return this.hosts.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.hosts.values()];
    this.hosts.clear();
    await Promise.all(all.map((p) => p.then((h) => h.server.close()).catch(() => {})));
  }
}
