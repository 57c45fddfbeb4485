/**
 * Records what real coding agents and client libraries send through Turnpike, as test fixtures.
 *
 *   npx -y bun@1.4.4 scripts/record-agents.ts [--clients DIR] [--only claude-code,codex,opencode,ai-sdk]
 *
 * Installs the latest releases of Claude Code, Codex, opencode and the AI SDK into a temporary
 * folder (or uses the one given with --clients), starts a gateway (its vendors served by the
 * simulator) behind a recording proxy, and runs each client through one multi-turn tool session
 * in a scratch workspace: Claude Code (`-p`, stream-json and json), Codex (`exec`, over HTTP and
 * over the Responses WebSocket), opencode (`run`), and the AI SDK (its OpenAI Responses, OpenAI
 * chat and Anthropic providers, generated and streamed). Every request the proxy saw is written,
 * secrets and machine paths scrubbed and the agents' own long texts (system prompts, tool
 * descriptions) replaced by placeholders, to
 * `apps/gateway/test/__fixtures__/agents/<client>-<version>/calls.json`; `manifest.json` there
 * names the versions recorded. Re-running it after a client release replaces that client's folder
 * and prints which request fields and headers came or went. `test/agent-corpus.test.ts` replays
 * the corpus against every catalog model.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ServerWebSocket } from "bun";
import { bootGateway } from "../apps/gateway/src/boot";
import { loadConfig } from "../apps/gateway/src/config/config";
import { SqliteStore } from "../apps/gateway/src/storage/sqlite-store";

const ROOT = resolve(import.meta.dir, "..");
const OUT = join(ROOT, "apps/gateway/test/__fixtures__/agents");
const ADMIN = `sk-admin-record-${crypto.randomUUID()}`;
const PACKAGES = [
  "@anthropic-ai/claude-code@latest",
  "@openai/codex@latest",
  "opencode-ai@latest",
  "ai@latest",
  "@ai-sdk/openai@latest",
  "@ai-sdk/anthropic@latest",
];

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
};
const only = flag("--only")?.split(",");

// ---------------------------------------------------------------------------------------------
// What is recorded, and how it is scrubbed.

/** One recorded exchange: an HTTP request, or a WebSocket session's client frames. */
export type Recorded =
  | { kind: "http"; method: string; path: string; headers: Record<string, string>; body: unknown; status: number }
  | { kind: "websocket"; path: string; headers: Record<string, string>; frames: unknown[]; responseIds: string[] };

/** Headers kept: the ones that carry protocol, not identity or transport. */
const KEPT_HEADERS =
  /^(content-type|accept|anthropic-version|anthropic-beta|openai-beta|user-agent|x-app|x-claude-code-session-id|session_id|originator|version|x-codex-[a-z-]+|x-stainless-helper-method)$/;
/** Strings never shortened: what a replay must send as it was (JSON text, ids, signatures, data). */
const VERBATIM_KEYS = new Set([
  "arguments",
  "input",
  "partial_json",
  "encrypted_content",
  "signature",
  "data",
  "url",
  "image_url",
  "file_data",
  "id",
  "call_id",
  "tool_use_id",
  "type",
  "model",
  "role",
  "name",
]);
/** Longer strings of other keys are the agent's own prose (prompts, tool descriptions): left out. */
const LONGEST_KEPT = 160;

let secret = "";
let workspace = "";
const home = homedir();

function scrubText(s: string): string {
  let out = s;
  if (secret) out = out.replaceAll(secret, "sk-tp-REDACTED");
  if (workspace) out = out.replaceAll(workspace, "/WORKSPACE");
  out = out.replaceAll(tmpdir(), "/TMP").replaceAll(home, "/HOME");
  return out;
}

function scrub(value: unknown, key = ""): unknown {
  if (typeof value === "string") {
    const s = scrubText(value);
    return s.length > LONGEST_KEPT && !VERBATIM_KEYS.has(key) ? `(${s.length} characters of the client's own text)` : s;
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, key));
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v, k)]));
  return value;
}

function keptHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    if (KEPT_HEADERS.test(k)) out[k] = scrubText(v);
  });
  return out;
}

function parseBody(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------------
// The gateway and the recording proxy in front of it.

async function startGateway() {
  const logs: string[] = [];
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    TURNPIKE_ADMIN_KEY: ADMIN,
    TURNPIKE_DB: ":memory:",
    TURNPIKE_LOG_LEVEL: "info",
  });
  const gw = await bootGateway(config, {
    store: new SqliteStore(":memory:"),
    firstKey: false,
    logDestination: { write: (line: string) => void logs.push(line) },
  });
  gw.app.listen({ port: 0, hostname: "127.0.0.1" });
  const url = `http://127.0.0.1:${gw.app.server!.port}`;
  const res = await fetch(`${url}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ name: "recording" }),
  });
  const { key } = (await res.json()) as { key: string };
  return { gw, url, key, logs };
}

interface WsData {
  path: string;
  headers: Headers;
  upstream?: WebSocket;
  pending: string[];
  session: Extract<Recorded, { kind: "websocket" }>;
}

function startProxy(target: string, sink: Recorded[]) {
  return Bun.serve<WsData>({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 255,
    async fetch(req, server) {
      const url = new URL(req.url);
      const path = url.pathname + url.search;
      if (req.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const session: WsData["session"] = {
          kind: "websocket",
          path,
          headers: keptHeaders(req.headers),
          frames: [],
          responseIds: [],
        };
        sink.push(session);
        if (server.upgrade(req, { data: { path, headers: req.headers, pending: [], session } })) return undefined;
        return new Response("upgrade failed", { status: 400 });
      }
      const text = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
      const headers = new Headers(req.headers);
      headers.delete("host");
      const res = await fetch(target + path, {
        method: req.method,
        headers,
        body: text || undefined,
        redirect: "manual",
      });
      sink.push({
        kind: "http",
        method: req.method,
        path: url.pathname,
        headers: keptHeaders(req.headers),
        body: scrub(parseBody(text)),
        status: res.status,
      });
      const out = new Headers(res.headers);
      out.delete("content-encoding");
      out.delete("content-length");
      return new Response(res.body, { status: res.status, headers: out });
    },
    websocket: {
      open(ws: ServerWebSocket<WsData>) {
        const headers: Record<string, string> = {};
        ws.data.headers.forEach((v, k) => {
          if (!/^(host|connection|upgrade|sec-websocket-)/.test(k)) headers[k] = v;
        });
        // The runtime's client takes handshake headers as an option of its own.
        const up = new WebSocket(target.replace("http", "ws") + ws.data.path, { headers } as unknown as string[]);
        ws.data.upstream = up;
        up.addEventListener("open", () => {
          for (const f of ws.data.pending.splice(0)) up.send(f);
        });
        up.addEventListener("message", (e) => {
          const text = String(e.data);
          ws.send(text);
          const frame = parseBody(text) as { type?: string; response?: { id?: string } };
          if (frame?.type === "response.completed" && frame.response?.id)
            ws.data.session.responseIds.push(frame.response.id);
        });
        up.addEventListener("close", () => ws.close());
      },
      message(ws: ServerWebSocket<WsData>, message) {
        const text = typeof message === "string" ? message : message.toString("utf8");
        ws.data.session.frames.push(scrub(parseBody(text)));
        if (ws.data.upstream?.readyState === WebSocket.OPEN) ws.data.upstream.send(text);
        else ws.data.pending.push(text);
      },
      close(ws: ServerWebSocket<WsData>) {
        ws.data.upstream?.close();
      },
    },
  });
}

// ---------------------------------------------------------------------------------------------
// The clients.

/** Runs a command to its end without blocking this process (the proxy it talks to runs here). */
async function run(
  cmd: string[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: { ...process.env, PWD: opts.cwd, ...opts.env },
    timeout: opts.timeoutMs ?? 240_000,
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: out + err };
}

async function version(bin: string, clients: string): Promise<string> {
  const out = (await run([bin, "--version"], { cwd: clients, env: {} })).out;
  return /\d+\.\d+\.\d+/.exec(out)?.[0] ?? "unknown";
}

function packageVersion(clients: string, name: string): string {
  return (JSON.parse(readFileSync(join(clients, "node_modules", name, "package.json"), "utf8")) as { version: string })
    .version;
}

function freshWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "turnpike-agent-ws-"));
  writeFileSync(join(dir, "notes.txt"), "hello notes\nthe projet is called Quokka\n");
  return dir;
}

const PROMPT = "Read notes.txt, fix the typo in it, and tell me what it says";

interface Client {
  name: string;
  version(clients: string): Promise<string>;
  /** `dir`: the workspace the agent works in; `home`: a folder of its own for its settings and caches. */
  record(ctx: { clients: string; proxy: string; key: string; dir: string; home: string }): Promise<string[]>;
}

const bin = (clients: string, name: string) => join(clients, "node_modules/.bin", name);

function codexConfig(proxy: string, websockets: boolean): string {
  return [
    'model = "beta-5"',
    'model_provider = "turnpike"',
    "[model_providers.turnpike]",
    'name = "Turnpike"',
    `base_url = "${proxy}/v1"`,
    'wire_api = "responses"',
    `supports_websockets = ${websockets}`,
    "[model_providers.turnpike.auth]",
    'command = "printenv"',
    'args = ["TURNPIKE_KEY"]',
    "",
  ].join("\n");
}

const CLIENTS: Client[] = [
  {
    name: "claude-code",
    version: (c) => version(bin(c, "claude"), c),
    async record({ clients, proxy, key, dir, home }) {
      const env = {
        ANTHROPIC_BASE_URL: proxy,
        ANTHROPIC_API_KEY: key,
        CLAUDE_CONFIG_DIR: join(home, "claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: "1",
      };
      // The first run also fills the agent's cache of discovered models, which the second picks from.
      const first = await run(
        [
          bin(clients, "claude"),
          "-p",
          PROMPT,
          "--model",
          "alpha-sonnet-4-6",
          "--output-format",
          "stream-json",
          "--verbose",
          "--allowedTools",
          "Read,Edit,Write",
        ],
        { cwd: dir, env },
      );
      const second = await run(
        [
          bin(clients, "claude"),
          "-p",
          PROMPT,
          "--model",
          "claude-code/gamma-3-pro",
          "--output-format",
          "json",
          "--allowedTools",
          "Read,Edit,Write",
        ],
        { cwd: dir, env },
      );
      // With tool search off every tool's schema is in the first request, among them the composed
      // ones (`allOf`, `pattern`) that only a vendor's full-JSON-Schema field takes (README "Tools").
      const third = await run(
        [
          bin(clients, "claude"),
          "-p",
          PROMPT,
          "--model",
          "claude-code/gamma-3-flash",
          "--output-format",
          "json",
          "--allowedTools",
          "Read,Edit,Write",
        ],
        { cwd: dir, env: { ...env, ENABLE_TOOL_SEARCH: "false" } },
      );
      return [first.out, second.out, third.out];
    },
  },
  {
    name: "codex",
    version: (c) => version(bin(c, "codex"), c),
    async record({ clients, proxy, key, dir, home }) {
      const outs: string[] = [];
      for (const websockets of [false, true]) {
        const codexHome = join(home, `codex-${websockets ? "ws" : "http"}`);
        mkdirSync(codexHome, { recursive: true });
        writeFileSync(join(codexHome, "config.toml"), codexConfig(proxy, websockets));
        const env = { CODEX_HOME: codexHome, TURNPIKE_KEY: key };
        const cmd = [
          bin(clients, "codex"),
          "exec",
          "--skip-git-repo-check",
          "--dangerously-bypass-approvals-and-sandbox",
          "--json",
          "-m",
          "beta-5",
        ];
        outs.push((await run([...cmd, `${PROMPT} (use apply_patch)`], { cwd: dir, env })).out);
      }
      return outs;
    },
  },
  {
    name: "opencode",
    version: (c) => version(bin(c, "opencode"), c),
    async record({ clients, proxy, key, dir, home }) {
      const config = {
        $schema: "https://opencode.ai/config.json",
        provider: {
          turnpike: {
            npm: "@ai-sdk/openai-compatible",
            name: "Turnpike",
            options: { baseURL: `${proxy}/v1`, apiKey: "{env:TURNPIKE_KEY}" },
            models: { "delta-m3": { name: "delta-m3" } },
          },
        },
      };
      writeFileSync(join(dir, "opencode.json"), JSON.stringify(config, null, 2));
      const env = { TURNPIKE_KEY: key, HOME: home, XDG_CONFIG_HOME: join(home, "config") };
      return [(await run([bin(clients, "opencode"), "run", "-m", "turnpike/delta-m3", PROMPT], { cwd: dir, env })).out];
    },
  },
  {
    name: "ai-sdk",
    version: async (c) => packageVersion(c, "ai"),
    async record({ clients, proxy, key, dir }) {
      const script = join(clients, "record-ai-sdk.mjs");
      writeFileSync(script, AI_SDK_SCRIPT);
      return [
        (
          await run([process.execPath, script], {
            cwd: clients,
            env: { TURNPIKE_URL: proxy, TURNPIKE_KEY: key, WORKSPACE: dir },
          })
        ).out,
      ];
    },
  },
];

/** A multi-turn tool session through each of the AI SDK's providers, generated and streamed. */
const AI_SDK_SCRIPT = `
import { generateText, streamText, tool, stepCountIs } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { z } from "zod";
const openai = createOpenAI({ apiKey: process.env.TURNPIKE_KEY, baseURL: process.env.TURNPIKE_URL + "/v1" });
const anthropic = createAnthropic({ apiKey: process.env.TURNPIKE_KEY, baseURL: process.env.TURNPIKE_URL + "/v1" });
const tools = { read_file: tool({ description: "Read a file of the workspace", inputSchema: z.object({ path: z.string() }), execute: async ({ path }) => "hello notes\\nthe projet is called Quokka" }) };
const models = [openai("gamma-3-flash"), openai.chat("alpha-haiku-4-5"), anthropic("beta-5")];
for (const model of models) {
  const g = await generateText({ model, tools, stopWhen: stepCountIs(3), prompt: "Read notes.txt with read_file and tell me what it says" });
  console.log(model.provider, "generate:", g.text.slice(0, 80));
  const s = streamText({ model, tools, stopWhen: stepCountIs(3), prompt: "Read notes.txt with read_file and tell me what it says" });
  console.log(model.provider, "stream:", (await s.text).slice(0, 80));
}
`;

// ---------------------------------------------------------------------------------------------

/** `path: field` for every top-level body field and header a recording holds: what a new release changed. */
function shapeOf(calls: Recorded[]): Set<string> {
  const out = new Set<string>();
  for (const c of calls) {
    for (const h of Object.keys(c.headers)) out.add(`${c.path} header ${h}`);
    const bodies = c.kind === "http" ? [c.body] : c.frames;
    for (const b of bodies)
      if (b && typeof b === "object" && !Array.isArray(b)) for (const k of Object.keys(b)) out.add(`${c.path} ${k}`);
  }
  return out;
}

function previousShape(name: string): Set<string> {
  const out = new Set<string>();
  let dirs: string[] = [];
  try {
    dirs = readdirSync(OUT).filter((d) => d.startsWith(`${name}-`));
  } catch {
    return out;
  }
  for (const d of dirs) {
    for (const s of shapeOf(JSON.parse(readFileSync(join(OUT, d, "calls.json"), "utf8")) as Recorded[])) out.add(s);
    rmSync(join(OUT, d), { recursive: true });
  }
  return out;
}

async function main() {
  let clients = flag("--clients");
  if (!clients) {
    clients = mkdtempSync(join(tmpdir(), "turnpike-agents-"));
    console.log(`Installing ${PACKAGES.join(", ")} into ${clients} …`);
    const install = await run(["npm", "install", "--no-audit", "--no-fund", "--prefix", clients, ...PACKAGES, "zod"], {
      cwd: clients,
      env: {},
      timeoutMs: 600_000,
    });
    if (install.code !== 0) throw new Error(`npm install failed:\n${install.out}`);
  }
  clients = resolve(clients);
  const { gw, url, key, logs } = await startGateway();
  secret = key;
  mkdirSync(OUT, { recursive: true });
  const manifestPath = join(OUT, "manifest.json");
  let manifest: { recorded: Record<string, { version: string; recorded_at: string; calls: number }> } = {
    recorded: {},
  };
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch {
    // First recording.
  }
  try {
    for (const client of CLIENTS) {
      if (only && !only.includes(client.name)) continue;
      const v = await client.version(clients);
      const calls: Recorded[] = [];
      const proxy = startProxy(url, calls);
      workspace = freshWorkspace();
      const home = mkdtempSync(join(tmpdir(), "turnpike-agent-home-"));
      const from = logs.length;
      console.log(`\n${client.name} ${v}`);
      try {
        for (const out of await client.record({
          clients,
          proxy: `http://127.0.0.1:${proxy.port}`,
          key,
          dir: workspace,
          home,
        }))
          console.log(
            `  ${out
              .trim()
              .split("\n")
              .slice(process.env.RECORD_VERBOSE ? 0 : -2)
              .join("\n  ")
              .slice(0, process.env.RECORD_VERBOSE ? 20000 : 400)}`,
          );
      } finally {
        proxy.stop(true);
        if (!process.env.RECORD_KEEP) {
          rmSync(workspace, { recursive: true, force: true });
          rmSync(home, { recursive: true, force: true });
        } else console.log(`  kept ${workspace} and ${home}`);
      }
      const refused = logs.slice(from).filter((l) => /"status":[45]\d\d/.test(l));
      const before = previousShape(client.name);
      const dir = join(OUT, `${client.name}-${v}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "calls.json"), `${JSON.stringify(calls, null, 1)}\n`);
      manifest.recorded[client.name] = {
        version: v,
        recorded_at: new Date().toISOString().slice(0, 10),
        calls: calls.length,
      };
      const after = shapeOf(calls);
      const added = [...after].filter((s) => !before.has(s));
      const gone = [...before].filter((s) => !after.has(s));
      console.log(
        `  ${calls.length} calls recorded in ${dir.slice(ROOT.length + 1)}; ${refused.length} answered 4xx/5xx by the gateway`,
      );
      for (const l of refused) console.log(`    ${l.slice(0, 300)}`);
      if (before.size) {
        for (const a of added) console.log(`  + ${a}`);
        for (const g of gone) console.log(`  - ${g}`);
      }
    }
  } finally {
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    await gw.close();
  }
}

if (import.meta.main) await main();
