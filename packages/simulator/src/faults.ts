import { CUT_INS, CUT_KINDS, type CutIn, type CutKind } from "./cut-stream";
import type { Protocol } from "./simulator-options";

/**
 * Trouble the simulator makes on purpose, per credential — so per deployment, since each vendor
 * account has its own key (a vendor served by Turnpike's built-in simulator sends
 * `simulator-<vendor id>`). Set through `POST /_sim/faults` or {@link Simulator.fault}.
 */
export interface Fault {
  /** Answer with this vendor error status (rendered in the route's protocol). */
  status?: number;
  /** The error's message (default: the vendor's usual one for the status). */
  message?: string;
  /** Seconds for the error's `retry-after`. */
  retry_after?: number;
  /** Wait this long before answering (the status line included). */
  first_byte_ms?: number;
  /** Drop the connection without an answer. */
  reset?: boolean;
  /** Never answer (until the caller gives up). */
  hang?: boolean;
  /** Apply to this many requests, then clear itself; absent = until cleared. */
  times?: number;
  /** Cut a streamed reply after this many deltas of the kind `cut_in` (cut-stream.ts). */
  cut_after?: number;
  /** Which deltas `cut_after` counts: text (default), tool (a tool call's arguments) or thinking. */
  cut_in?: CutIn;
  /** How the cut ends the stream: reset (default), idle, error (in-band) or truncate (no terminal event). */
  cut?: CutKind;
}

const FIELDS: Record<keyof Fault, "number" | "boolean" | "string"> = {
  status: "number",
  message: "string",
  retry_after: "number",
  first_byte_ms: "number",
  reset: "boolean",
  hang: "boolean",
  times: "number",
  cut_after: "number",
  cut_in: "string",
  cut: "string",
};

/** A `POST /_sim/faults` body checked: `{key, ...fault}`; a message when it is wrong. */
export function readFault(body: unknown): { key: string; fault: Fault } | string {
  if (typeof body !== "object" || body === null)
    return "the body must be an object {key, status, message, retry_after, first_byte_ms, reset, hang, times, cut_after, cut_in, cut}";
  const o = body as Record<string, unknown>; // an object: checked just above
  if (typeof o.key !== "string" || o.key === "") return "key: the credential the fault applies to is required";
  const fault: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (k === "key") continue;
    const want = FIELDS[k as keyof Fault];
    if (!want) return `${k}: unknown field (known: key, ${Object.keys(FIELDS).join(", ")})`;
    if (typeof v !== want || (want === "number" && (!Number.isFinite(v) || (v as number) < 0)))
      return `${k}: must be a ${want === "number" ? "non-negative number" : want}`;
    fault[k] = v;
  }
  if (fault.cut_in !== undefined && !CUT_INS.includes(fault.cut_in as string))
    return `cut_in: one of ${CUT_INS.join(", ")}`;
  if (fault.cut !== undefined && !CUT_KINDS.includes(fault.cut as string)) return `cut: one of ${CUT_KINDS.join(", ")}`;
  if (fault.status !== undefined && ((fault.status as number) < 400 || (fault.status as number) > 599))
    return "status: must be an error status from 400 to 599";
  return { key: o.key, fault: fault as Fault };
}

/** The credential a request carries, as each protocol sends it. */
export function credential(protocol: Protocol, headers: Headers, query: string): string {
  const bearer = (headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "");
  if (protocol === "generate") return headers.get("x-goog-api-key") || new URLSearchParams(query).get("key") || "";
  return headers.get("x-api-key") || bearer;
}

/** The faults by credential; `take` counts a use of one that is limited. */
export class FaultTable {
  private readonly byKey = new Map<string, Fault>();

  set(key: string, fault: Fault): void {
    this.byKey.set(key, { ...fault });
  }

  clear(key?: string): void {
    if (key === undefined) this.byKey.clear();
    else this.byKey.delete(key);
  }

  get size(): number {
    return this.byKey.size;
  }

  take(key: string): Fault | undefined {
    const f = this.byKey.get(key);
    if (!f) return undefined;
    if (f.times !== undefined) {
      f.times--;
      if (f.times <= 0) this.byKey.delete(key);
    }
    return f;
  }
}

/** A body whose first read fails: the runtime drops the connection before any answer. */
export function resetResponse(): Response {
  return new Response(
    new ReadableStream({
      start(c) {
        c.error(new Error("connection reset by the simulator's fault"));
      },
    }),
  );
}

/** Waits until the caller gives up (its request is aborted), then drops the connection. */
export async function hang(signal: AbortSignal): Promise<Response> {
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
  return resetResponse();
}
