import { RedisClient } from "bun";

/** Thrown by a command while Redis cannot be reached: callers fall back or refuse (see redis-failover.ts). */
export class RedisDown extends Error {
  constructor(cause?: unknown) {
    super(`Redis is unreachable${cause instanceof Error ? `: ${cause.message}` : ""}`);
    this.name = "RedisDown";
  }
}

/**
 * One connection to Redis (`TURNPIKE_REDIS_URL`) that never makes a request wait for it: while it
 * is down, commands fail at once with {@link RedisDown} (no offline queue), and a loop reconnects
 * in the background every `retryMs`. Commands from the same turn of the event loop are pipelined
 * by Bun's client. A second connection carries subscriptions (a subscribed connection can only
 * subscribe), re-subscribed after every reconnection.
 */
export class RedisLink {
  private client: RedisClient | undefined;
  private subscriber: RedisClient | undefined;
  private readonly channels = new Map<string, (message: string) => void>();
  private reconnecting: Promise<void> | undefined;
  private closed = false;
  /** Listeners told when the link goes up or down (readiness, logs). */
  private readonly watchers = new Set<(up: boolean) => void>();
  up = false;

  constructor(
    readonly url: string,
    readonly prefix: string,
    private readonly opts: { retryMs?: number; timeoutMs?: number } = {},
  ) {}

  /** Connects once; when it fails, the link starts down and keeps trying in the background. */
  async start(): Promise<boolean> {
    await this.connect().catch(() => this.markDown());
    return this.up;
  }

  onState(fn: (up: boolean) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private fresh(): RedisClient {
    const c = new RedisClient(this.url, {
      enableOfflineQueue: false,
      autoReconnect: false,
      connectionTimeout: this.opts.timeoutMs ?? 1000,
      enableAutoPipelining: true,
    });
    c.onclose = () => {
      if (!this.closed) this.markDown();
    };
    return c;
  }

  private async connect(): Promise<void> {
    const client = this.fresh();
    const subscriber = this.fresh();
    try {
      await Promise.all([client.connect(), subscriber.connect()]);
      for (const [channel, fn] of this.channels) await subscriber.subscribe(channel, (m) => fn(m));
    } catch (e) {
      client.close();
      subscriber.close();
      throw e;
    }
    this.client?.close();
    this.subscriber?.close();
    this.client = client;
    this.subscriber = subscriber;
    this.setUp(true);
  }

  private setUp(up: boolean): void {
    if (this.up === up) return;
    this.up = up;
    for (const w of this.watchers) w(up);
  }

  private markDown(): void {
    this.setUp(false);
    if (this.closed || this.reconnecting) return;
    this.reconnecting = (async () => {
      while (!this.closed && !this.up) {
        await Bun.sleep(this.opts.retryMs ?? 500);
        if (this.closed) break;
        await this.connect().catch(() => {});
      }
    })().finally(() => {
      this.reconnecting = undefined;
    });
  }

  /** Commands sent and not yet answered, and answers received (the watchdog's two counters). */
  private inflight = 0;
  private answered = 0;
  private watchdog: ReturnType<typeof setInterval> | undefined;

  /**
   * A server that stops answering without closing the connection must not hold requests. One
   * timer for all commands, and no clock read per command: when commands are waiting and no
   * answer at all came for the timeout, the connection is dropped (its commands then fail).
   */
  private watch(): void {
    if (this.watchdog) return;
    const timeoutMs = this.opts.timeoutMs ?? 1000;
    const tick = Math.max(50, timeoutMs / 4);
    let lastAnswered = -1;
    let silentMs = 0;
    this.watchdog = setInterval(() => {
      if (this.inflight === 0 || this.answered !== lastAnswered) {
        lastAnswered = this.answered;
        silentMs = 0;
        return;
      }
      silentMs += tick;
      if (silentMs < timeoutMs) return;
      silentMs = 0;
      this.inflight = 0;
      this.client?.close();
      this.markDown();
    }, tick);
    this.watchdog.unref?.();
  }

  /** Runs a command; rejects with {@link RedisDown} when Redis cannot answer. */
  send(command: string, args: string[]): Promise<unknown> {
    const c = this.client;
    if (!this.up || !c) return Promise.reject(new RedisDown());
    this.watch();
    this.inflight++;
    return c.send(command, args).then(
      (v) => {
        this.inflight--;
        this.answered++;
        return v;
      },
      (e) => {
        this.inflight = Math.max(0, this.inflight - 1);
        this.answered++;
        if (!c.connected) {
          c.close();
          this.markDown();
          throw new RedisDown(e);
        }
        throw e;
      },
    );
  }

  /** Runs a Lua script by its SHA, loading it on first use (or after a server restart). */
  async script(source: string, sha: string, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.send("EVALSHA", [sha, String(keys.length), ...keys, ...args]);
    } catch (e) {
      if (e instanceof Error && /NOSCRIPT/.test(e.message))
        return this.send("EVAL", [source, String(keys.length), ...keys, ...args]);
      throw e;
    }
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.send("PUBLISH", [this.prefix + channel, message]);
  }

  /** Subscribes to a channel (under the prefix), now and after every reconnection. */
  async subscribe(channel: string, fn: (message: string) => void): Promise<void> {
    const full = this.prefix + channel;
    this.channels.set(full, fn);
    if (this.up && this.subscriber) await this.subscriber.subscribe(full, (m) => fn(m)).catch(() => this.markDown());
  }

  close(): void {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.client?.close();
    this.subscriber?.close();
    this.setUp(false);
  }
}

/** SHA-1 of a script, as Redis names it for EVALSHA. */
export function scriptSha(source: string): string {
  return new Bun.CryptoHasher("sha1").update(source).digest("hex");
}

/**
 * What inference does while Redis cannot be reached (`TURNPIKE_REDIS_FAIL`): `open` keeps
 * serving on this instance's own counters, `closed` refuses with a 503.
 */
export type RedisFailMode = "open" | "closed";
export const REDIS_FAIL_MODES: readonly RedisFailMode[] = ["open", "closed"];
