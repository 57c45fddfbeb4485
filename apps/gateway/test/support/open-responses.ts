/**
 * Holds every Responses reply a test sees to the Open Responses schema (open-responses-schema.ts):
 * JSON replies, each stream event's response snapshot, its output items and content parts, and
 * WebSocket frames. A test file wraps its fetch (or its frames) in one `SpecWatch` and asserts,
 * after each test, that nothing failed and that something was checked.
 */
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { SSEDecoderStream } from "@turnpike/schema/sse";
import { SpecOutputItem, SpecOutputText, SpecResponse } from "./open-responses-schema";

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Each way `value` breaks `schema`, as `where: path message`. */
function problemsOf(schema: TSchema, value: unknown, where: string): string[] {
  return [...Value.Errors(schema, value)].map((e) => `${where}: ${e.path || "/"} ${e.message}`);
}

/** The ways a response object breaks the specification, including its one cross-field rule. */
export function responseProblems(response: unknown, where = "response"): string[] {
  const problems = problemsOf(SpecResponse, response, where);
  // `completed_at` says when a completed response completed: set exactly when it did.
  if (isObject(response) && (response.status === "completed") !== (typeof response.completed_at === "number"))
    problems.push(`${where}: status ${String(response.status)} with completed_at ${String(response.completed_at)}`);
  return problems;
}

export class SpecWatch {
  /** How many response objects, items and parts were checked. */
  checked = 0;
  readonly problems: string[] = [];
  private pending: Promise<unknown>[] = [];

  /** A fetch that checks whatever a Responses endpoint answers (pass it to a client library). */
  readonly fetch = (async (input: RequestInfo | URL, init?: RequestInit) =>
    this.watch(await fetch(input, init))) as typeof fetch;

  /** Checks a JSON reply or an event stream of a Responses endpoint, as the caller reads it too. */
  watch(res: Response): Response {
    const type = res.headers.get("content-type") ?? "";
    if (!res.ok || !res.body || !new URL(res.url || "http://x/").pathname.includes("/responses")) return res;
    if (type.includes("application/json")) {
      this.pending.push(
        res
          .clone()
          .json()
          .then((body: unknown) => this.reply(body))
          .catch(() => {}),
      );
      return res;
    }
    if (!type.includes("text/event-stream")) return res;
    const [mine, theirs] = res.body.tee();
    this.pending.push(this.events(mine).catch(() => {}));
    const copy = new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(copy, "url", { value: res.url });
    return copy;
  }

  /** A JSON reply: a response object (lists and deletions are not). */
  reply(body: unknown, where = "reply"): void {
    if (!isObject(body) || body.object !== "response" || body.deleted === true) return;
    this.checked++;
    this.problems.push(...responseProblems(body, where));
  }

  /** One event of a stream or one WebSocket frame (its JSON text). */
  frame(data: string): void {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(event) || typeof event.type !== "string") return;
    const where = `${event.type} #${String(event.sequence_number)}`;
    if (isObject(event.response)) this.reply(event.response, where);
    if (event.type.startsWith("response.output_item.")) this.check(SpecOutputItem, event.item, `${where} item`);
    if (event.type.startsWith("response.content_part.") && isObject(event.part) && event.part.type === "output_text")
      this.check(SpecOutputText, event.part, `${where} part`);
  }

  /** Waits for every body being read, so that the problems are all in. */
  async settle(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }

  private check(schema: TSchema, value: unknown, where: string): void {
    this.checked++;
    this.problems.push(...problemsOf(schema, value, where));
  }

  private async events(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.pipeThrough(new SSEDecoderStream()).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      this.frame(value.data);
    }
  }
}
