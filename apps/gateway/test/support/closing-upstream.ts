/**
 * A vendor on a real socket that records when the gateway lets go of it: every call's arrival,
 * when its answer's head went out, and when its connection closed (`performance.now()`, the
 * clock of this process, so a test or the bench compares it with the moment its client left).
 * The answers are the simulator's, in each vendor's protocol, written chunk by chunk as they come;
 * a prompt holding `[hold]` gets no answer at all (an upstream still thinking before its head),
 * `[silent]` gets its head and then nothing (before the first byte of the body). `node:http`
 * rather than `Bun.serve`: its socket's `close` event is the connection's own end, where
 * `Bun.serve` only tells of a cancelled body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createSimulatorFetch } from "@turnpike/simulator";

/** One call the upstream received (count calls and stream calls alike). */
export interface UpstreamCall {
  path: string;
  body: string;
  arrivedAt: number;
  /** When the answer's head was written (undefined: not yet, or never). */
  headAt: number | undefined;
  /** When the call's connection closed (undefined: still open). */
  closedAt: number | undefined;
  /** The body bytes written to the gateway so far, as text. */
  written: string;
  /** The answer was written to its end. */
  finished: boolean;
}

export interface ClosingUpstream {
  url: string;
  calls: UpstreamCall[];
  /** Resolves when `pick` finds a call, checked as calls arrive, write and close. */
  when(pick: (calls: UpstreamCall[]) => UpstreamCall | undefined, timeoutMs?: number): Promise<UpstreamCall>;
  stop(): Promise<void>;
}

/** Count calls answer at once; only the inference calls are watched by a test. */
const COUNT_PATH = /count_tokens|countTokens|input_tokens/;

export async function startClosingUpstream(): Promise<ClosingUpstream> {
  const sim = createSimulatorFetch();
  const calls: UpstreamCall[] = [];
  const sockets = new Set<Socket>();
  const open = new WeakMap<Socket, UpstreamCall[]>();
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const w of waiters) w();
  };
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const call: UpstreamCall = {
      path: req.url ?? "",
      body,
      arrivedAt: performance.now(),
      headAt: undefined,
      closedAt: undefined,
      written: "",
      finished: false,
    };
    calls.push(call);
    // A kept-alive connection carries one call after another: its close is told to each (one listener a connection).
    let on = open.get(req.socket);
    if (!on) {
      const calls: UpstreamCall[] = [];
      on = calls;
      open.set(req.socket, calls);
      req.socket.once("close", () => {
        const now = performance.now();
        for (const c of calls) c.closedAt = now;
        changed();
      });
    }
    on.push(call);
    changed();
    if (!COUNT_PATH.test(call.path) && body.includes("[hold]")) return; // no answer, ever
    if (!COUNT_PATH.test(call.path) && body.includes("[silent]")) {
      // A head at once (well within the gateway's 20 ms before it listens to its client), then nothing.
      const stream = /"stream":\s*true/.test(body) || call.path.includes("streamGenerateContent");
      res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json" });
      res.flushHeaders();
      call.headAt = performance.now();
      changed();
      return;
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const answer = await sim(`http://upstream${call.path}`, { method: "POST", headers, body });
    // The simulator's own headers (content type, retry-after, rate limits), as a vendor sends them.
    const head: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (k !== "content-length") head[k] = v;
    });
    res.writeHead(answer.status, head);
    res.flushHeaders();
    call.headAt = performance.now();
    changed();
    const reader = answer.body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done || call.closedAt !== undefined) break;
      res.write(value);
      call.written += new TextDecoder().decode(value);
      changed();
    }
    if (call.closedAt !== undefined) return void reader.cancel().catch(() => {});
    call.finished = true;
    res.end();
  };
  const server = createServer((req, res) => {
    serve(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo; // a TCP listener's address is an AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    when(pick, timeoutMs = 10_000) {
      return new Promise((ok, fail) => {
        const check = () => {
          const found = pick(calls);
          if (!found) return;
          clearTimeout(timer);
          waiters.delete(check);
          ok(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`the upstream did not see it within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

/** The settings that point every vendor (the four built-in words and `epsilon`, a Responses vendor) at `url`. */
export function closingUpstreamEnv(url: string, responsesVendorConfig: string): Record<string, string> {
  return {
    ALPHA_API_KEY: "k",
    ALPHA_BASE_URL: url,
    BETA_API_KEY: "k",
    BETA_BASE_URL: `${url}/v1`,
    GAMMA_API_KEY: "k",
    GAMMA_BASE_URL: url,
    DELTA_API_KEY: "k",
    DELTA_BASE_URL: `${url}/v1`,
    EPSILON_API_KEY: "k",
    EPSILON_BASE_URL: `${url}/v1`,
    TURNPIKE_CONFIG: responsesVendorConfig,
  };
}
