import type { RedisLink } from "../storage/redis-link";

/** What any instance needs to take over an MCP session: whose it is and how it was opened. */
export interface McpSessionRecord {
  key_id: string;
  /** The `initialize` request's params (protocol version, capabilities, client info), replayed to take over. */
  initialize: Record<string, unknown>;
}

/** Where MCP sessions live: Redis when configured (any instance serves any session), else this process. */
export interface McpSessionStore {
  save(id: string, record: McpSessionRecord): Promise<void>;
  load(id: string): Promise<McpSessionRecord | undefined>;
  remove(id: string): Promise<void>;
}

/** A session unused this long is forgotten (its client then starts a new one, as the spec has it on a 404). */
export const SESSION_TTL_S = 24 * 3600;

export class MemoryMcpSessions implements McpSessionStore {
  private readonly sessions = new Map<string, { record: McpSessionRecord; until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async save(id: string, record: McpSessionRecord): Promise<void> {
    // Bounded: the oldest sessions go first when a process holds very many.
    if (this.sessions.size >= 100_000) this.sessions.delete(this.sessions.keys().next().value ?? "");
    this.sessions.set(id, { record, until: this.now() + SESSION_TTL_S * 1000 });
  }

  async load(id: string): Promise<McpSessionRecord | undefined> {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.until <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return s.record;
  }

  async remove(id: string): Promise<void> {
    this.sessions.delete(id);
  }
}

/**
 * Sessions in Redis, so that a load balancer may send each request of a session to any instance.
 * While Redis cannot answer, sessions opened meanwhile live in this process (a client whose next
 * request lands elsewhere gets a 404 and opens a new session, which MCP clients do on their own).
 */
export class RedisMcpSessions implements McpSessionStore {
  private readonly local = new MemoryMcpSessions();

  constructor(private readonly link: RedisLink) {}

  private key(id: string): string {
    return `${this.link.prefix}mcp:session:${id}`;
  }

  async save(id: string, record: McpSessionRecord): Promise<void> {
    try {
      await this.link.send("SET", [this.key(id), JSON.stringify(record), "EX", String(SESSION_TTL_S)]);
    } catch {
      await this.local.save(id, record);
    }
  }

  async load(id: string): Promise<McpSessionRecord | undefined> {
    try {
      // GETEX: the session's lifetime starts again with each use.
      const v = await this.link.send("GETEX", [this.key(id), "EX", String(SESSION_TTL_S)]);
      if (typeof v === "string") return JSON.parse(v) as McpSessionRecord; // written by save() as JSON of this type
    } catch {
      // Redis is away: only sessions opened here meanwhile can be served.
    }
    return this.local.load(id);
  }

  async remove(id: string): Promise<void> {
    await this.local.remove(id);
    await this.link.send("DEL", [this.key(id)]).catch(() => {});
  }
}
