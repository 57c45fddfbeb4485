/**
 * The peer: the open-source TypeScript gateway users would otherwise pick — Portkey's
 * (`@portkey-ai/gateway` on npm, a bench dependency) — started by the benchmark, pinned to the
 * proxy core like every proxy under test, and pointed at the simulator.
 *
 * It keeps no keys and no upstream settings of its own in this shape: each request names the
 * vendor (`x-portkey-provider`), where it lives (`x-portkey-custom-host`, loopback is trusted by
 * default) and carries the vendor's own key. It serves the messages and chat formats as they
 * are, and translates chat to messages; it does not serve a messages client on a chat or
 * generateContent upstream ("messages is not supported by openai"), and it relays a Responses
 * call to the upstream's own `/v1/responses` rather than translating it to chat — those
 * scenarios are not loaded through it.
 *
 * It runs on Bun (the benchmark's runtime) rather than Node: its published build on Node
 * 20.20 answers every stream with a 500 (`TypeError: immutable` appending a header to the
 * upstream's response in Node's fetch); on Bun 1.4.4 every scenario above works. Its docs list
 * both runtimes.
 */
import { dirname, join } from "node:path";
import { CORE, freePort, startService, type Service } from "./processes";
import { type HttpRequestSpec, type Scenario, UPSTREAM_KEY } from "./scenarios";
import { fetchCapEnv } from "./services";

export const PEER_NAME = "Portkey gateway";
export const PEER_PACKAGE = "@portkey-ai/gateway";

/** Where the peer's package is installed, or undefined when it is not (its scenarios are then skipped by name). */
export function peerDir(): string | undefined {
  try {
    return dirname(Bun.resolveSync(`${PEER_PACKAGE}/package.json`, import.meta.dir));
  } catch {
    return undefined;
  }
}

/** The peer's version, as installed. */
export async function peerVersion(): Promise<string | undefined> {
  const dir = peerDir();
  if (!dir) return undefined;
  const pkg = (await Bun.file(join(dir, "package.json")).json()) as { version?: unknown }; // npm's package.json
  return typeof pkg.version === "string" ? pkg.version : undefined;
}

/** How the peer reaches each upstream of the benchmark: its provider name and the vendor key header. */
const UPSTREAMS = {
  messages: { provider: "anthropic", headers: { "x-api-key": UPSTREAM_KEY, "anthropic-version": "2023-06-01" } },
  chat: { provider: "openai", headers: { authorization: `Bearer ${UPSTREAM_KEY}` } },
} as const;

/** The scenarios the peer serves, with the upstream each one reaches. */
export const PEER_SCENARIOS: Record<string, keyof typeof UPSTREAMS> = {
  "messages passthrough": "messages",
  "chat passthrough": "chat",
  "chat→messages": "messages",
  "stream messages passthrough": "messages",
  "stream chat passthrough": "chat",
  "stream chat→messages": "messages",
};

export function peerServes(s: Scenario): boolean {
  return s.name in PEER_SCENARIOS;
}

/**
 * The request a client of the peer sends for a scenario: the scenario's own client body, the
 * vendor named in headers with the simulator as its custom host, the vendor key in the vendor's
 * header. Undefined for a scenario the peer does not serve.
 */
export function peerRequest(s: Scenario, simulatorURL: string): HttpRequestSpec | undefined {
  const upstream = PEER_SCENARIOS[s.name];
  if (!upstream) return undefined;
  const u = UPSTREAMS[upstream];
  return {
    method: "POST",
    path: s.gateway.path,
    headers: {
      "content-type": "application/json",
      "x-portkey-provider": u.provider,
      "x-portkey-custom-host": `${simulatorURL}/v1`,
      ...u.headers,
    },
    body: s.gateway.body,
    stream: s.stream,
  };
}

/** The peer as its package's server (`build/start-server.js --headless`: no log console), on Bun, on the proxy core. */
export async function startPeerProcess(fetchCap: number): Promise<Service> {
  const dir = peerDir();
  if (!dir) throw new Error(`${PEER_PACKAGE} is not installed (bench dependency): run bun install`);
  const port = freePort();
  return startService({
    name: "peer",
    core: CORE.proxy,
    cmd: ["bun", join(dir, "build", "start-server.js"), `--port=${port}`, "--headless"],
    cwd: dir,
    port,
    env: { NODE_ENV: "production", ...fetchCapEnv(fetchCap) },
  });
}
