import type { Upstream } from "../vocabulary/target";
import { isRecord } from "../vocabulary/client-errors";
import { Slicer } from "../vocabulary/loop-turns";
import { fileLines, readsOf } from "../http/file-lines";

/**
 * What every vendor batch API shares (docs/protocols.md, "Batches"): the shape of one protocol's
 * batch API (`UpstreamProtocol.batches`, each protocol's own `<name>-batches.ts`), and the
 * transport they all use — calls with an error status as {@link UpstreamBatchError}, JSONL
 * results read as they come, request bodies made as they are sent. Each line is already in the
 * upstream's protocol (batches/prepare-line.ts); each answer is read back as the status and body
 * the same call would have had, and replayed through the pipeline (batches/batch-worker.ts).
 */

/** What a batch API call needs of the gateway: its `fetch` (injected, as everywhere). */
export interface BatchFetch {
  fetch: typeof fetch;
}

/** One line as the upstream batch takes it: its id in the upstream batch, and its request body. */
export interface UpstreamLine {
  customId: string;
  body: Record<string, unknown>;
}

/** An upstream's answer to one line: the status and body a direct call would have had. */
export interface UpstreamAnswer {
  status: number;
  body: unknown;
}

/** What became of a line in the upstream batch: answered, or never run (cancelled, expired). */
export type UpstreamOutcome = UpstreamAnswer | "cancelled" | "expired";

export interface UpstreamResults {
  outcomes: Map<string, UpstreamOutcome>;
  missing?: "cancelled" | "expired";
}

/** Where an upstream batch stands: still running, ended (results ready), or failed as a whole. */
export type UpstreamBatchState = "running" | "ended" | "failed";

/** The upstream answered a batch call with an error status. */
export class UpstreamBatchError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /** The upstream will not take this batch (no batch API, a refused file): not worth trying again. */
  get refused(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

export interface UpstreamBatchApi {
  /**
   * The endpoint, as this batch API names it, that serves a direct call to this upstream path
   * (`/v1/chat/completions`, `/v1/embeddings`, `/v1/messages`, `/v1beta/models/{m}:generateContent`),
   * or undefined where the batch API does not serve that call (the line then runs in Turnpike's queue).
   */
  endpoint(path: string): string | undefined;
  /**
   * Sends the lines as one upstream batch to `endpoint`, each read from `lines` as the body is
   * sent ({@link streamedBody}); returns the upstream's batch id.
   */
  submit(
    deps: BatchFetch,
    upstream: Upstream,
    endpoint: string,
    lines: AsyncIterable<UpstreamLine> | Iterable<UpstreamLine>,
  ): Promise<string>;
  poll(deps: BatchFetch, upstream: Upstream, id: string): Promise<UpstreamBatchState>;
  /** Each line's outcome, by its custom id; lines absent were never run (`missing` says why, if the upstream said). */
  results(deps: BatchFetch, upstream: Upstream, id: string): Promise<UpstreamResults>;
  cancel(deps: BatchFetch, upstream: Upstream, id: string): Promise<void>;
}

export async function call(deps: BatchFetch, url: string, init: RequestInit, what: string): Promise<Response> {
  const res = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(120_000) });
  if (!res.ok) {
    const text = (await res.text()).slice(0, 500);
    throw new UpstreamBatchError(res.status, `${what}: ${res.status} ${text}`);
  }
  return res;
}

export async function json(res: Response): Promise<Record<string, unknown>> {
  const v: unknown = await res.json();
  if (!isRecord(v)) throw new UpstreamBatchError(502, "the upstream's batch reply is not a JSON object");
  return v;
}

/**
 * The rows of a JSONL reply, read as its bytes come, line by line (a line across two reads is
 * joined first), each parsed in turn with a turn of the event loop every few milliseconds: the
 * results of 50,000 lines are 100 MB and more, which read as one text and split held the loop
 * for seconds.
 */
export async function* jsonRows(res: Response): AsyncGenerator<Record<string, unknown>> {
  if (!res.body) return;
  const slicer = new Slicer();
  for await (const line of fileLines(readsOf(res.body), Number.MAX_SAFE_INTEGER)) {
    await slicer.pause();
    if (line.text === undefined || !line.text.trim()) continue;
    try {
      const v: unknown = JSON.parse(line.text);
      if (isRecord(v)) yield v;
    } catch {
      // A line that is not JSON answers no request: its request is left unanswered.
    }
  }
}

/** The pieces a streamed request body is sent in: about this many characters each (a line more at most). */
export const UPSTREAM_PIECE_BYTES = 1 << 20;

/**
 * A request body made as it is sent: `head`, then each item's text (`sep` between them), then
 * `tail`, in pieces of about {@link UPSTREAM_PIECE_BYTES} characters, each made when the upstream
 * has taken the one before, with a turn of the event loop every few milliseconds while the items
 * are read and written. Nothing but the piece being made is held: 50,000 lines of 2 KB made into
 * one string (and a form of it) held the loop for 0.4–1.9 s. An upstream that stops reading (a
 * refusal part way) stops the items too.
 */
export function streamedBody<T>(
  head: string,
  items: AsyncIterable<T> | Iterable<T>,
  text: (item: T) => string,
  sep: string,
  tail: string,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const slicer = new Slicer();
  const it = (async function* () {
    yield* items;
  })();
  let started = false;
  let written = 0;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    async pull(out) {
      if (ended) return out.close();
      const parts: string[] = started ? [] : [head];
      let size = started ? 0 : head.length;
      started = true;
      while (size < UPSTREAM_PIECE_BYTES) {
        const next = await it.next();
        if (next.done) {
          parts.push(tail);
          ended = true;
          break;
        }
        const t = (written++ > 0 ? sep : "") + text(next.value);
        parts.push(t);
        size += t.length;
        await slicer.pause();
      }
      out.enqueue(encoder.encode(parts.join("")));
    },
    async cancel() {
      await it.return(undefined);
    },
  });
}

/**
 * A `multipart/form-data` body of `fields` and then one file, a JSONL of each line's `row`, sent
 * as it is made. JSONL cannot hold the boundary: a line break inside a JSON string is escaped.
 */
export function multipart(
  fields: Record<string, string>,
  file: { name: string; filename: string; type: string },
  lines: AsyncIterable<UpstreamLine> | Iterable<UpstreamLine>,
  row: (l: UpstreamLine) => string,
): { body: ReadableStream<Uint8Array>; contentType: string } {
  const boundary = `turnpike-${crypto.randomUUID()}`;
  const head = [
    ...Object.entries(fields).map(
      ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
    ),
    `--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`,
  ].join("");
  return {
    body: streamedBody(head, lines, row, "\n", `\n\r\n--${boundary}--\r\n`),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

export const idOf = (o: Record<string, unknown>, what: string): string => {
  if (typeof o.id !== "string") throw new UpstreamBatchError(502, `${what}: the reply names no id`);
  return o.id;
};
