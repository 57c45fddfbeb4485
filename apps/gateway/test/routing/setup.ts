/** A gateway whose models have several deployments and fallbacks, and a client for each format and mode. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PipelineHooks } from "../../src/request/events";
import { readSSE, startHarness, type Harness } from "../harness";

/** Both client formats, JSON and stream. */
export const VARIANTS = [
  { format: "messages", stream: false },
  { format: "messages", stream: true },
  { format: "chat", stream: false },
  { format: "chat", stream: true },
] as const;
export type Variant = (typeof VARIANTS)[number];
export const label = (v: Variant) => `${v.format} ${v.stream ? "stream" : "JSON"}`;

/** Writes `yaml` to a config file and starts a gateway on it (the clock may be injected). */
export async function routedGateway(
  yaml: string,
  opts: { now?: () => number; fetch?: typeof fetch; hooks?: PipelineHooks[] } = {},
): Promise<Harness> {
  const file = join(mkdtempSync(join(tmpdir(), "turnpike-routing-")), "turnpike.yaml");
  writeFileSync(file, yaml);
  return startHarness({ TURNPIKE_CONFIG: file }, opts);
}

export interface Answer {
  res: Response;
  status: number;
  /** The reply's text (JSON body or the stream's deltas); for an error, its message. */
  text: string;
  /** The `model` the reply names. */
  model: string | undefined;
  /** The error type (JSON error or the stream's in-band error), if any. */
  errorType: string | undefined;
  /** A JSON error's code, if any. */
  errorCode?: string | undefined;
}

/** One request in a variant; `messages` replaces the default one-turn history. */
export async function ask(
  h: Harness,
  v: Variant,
  model: string,
  prompt: string,
  opts: { headers?: Record<string, string>; messages?: unknown[] } = {},
): Promise<Answer> {
  const messages = opts.messages ?? [{ role: "user", content: prompt }];
  const body =
    v.format === "messages"
      ? { model, max_tokens: 64, stream: v.stream, messages }
      : { model, stream: v.stream, messages };
  const res = await h.call(v.format === "messages" ? "/v1/messages" : "/v1/chat/completions", {
    method: "POST",
    dialect: v.format,
    body: JSON.stringify(body),
    ...(opts.headers ? { headers: opts.headers } : {}),
  });
  const out: Answer = { res, status: res.status, text: "", model: undefined, errorType: undefined };
  if (!res.ok || !v.stream) {
    const j = (await res.json()) as Record<string, any>;
    if (j.error)
      return {
        ...out,
        text: j.error.message,
        errorType: j.error.type ?? j.error.code,
        errorCode: j.error.code ?? undefined,
      };
    out.model = j.model;
    out.text =
      v.format === "messages"
        ? j.content
            .filter((b: any) => b.type === "text")
            .map((b: any) => b.text)
            .join("")
        : j.choices[0].message.content;
    return out;
  }
  for (const f of await readSSE(res)) {
    if (f.data === "[DONE]") continue;
    const d = JSON.parse(f.data) as Record<string, any>;
    if (d.error || d.type === "error") out.errorType = (d.error?.type ?? "error") as string;
    if (v.format === "messages") {
      if (d.type === "message_start") out.model = d.message.model;
      if (d.type === "content_block_delta" && d.delta.type === "text_delta") out.text += d.delta.text;
    } else {
      out.model ??= d.model;
      out.text += d.choices?.[0]?.delta?.content ?? "";
    }
  }
  return out;
}

/** The ledger row of a reply (after the ledger is flushed). */
export async function recordOf(h: Harness, res: Response) {
  await h.gw.deps.ledger.flush();
  const rows = await h.gw.deps.store.queryUsage({ key_id: h.keyId, limit: 10_000 });
  const row = rows.find((r) => r.request_id === res.headers.get("x-request-id"));
  if (!row) throw new Error("no ledger row for this reply");
  return row;
}
