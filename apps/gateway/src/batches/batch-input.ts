import type { BatchConfig } from "../config/config";
import { invalid, isRecord } from "../vocabulary/client-errors";
import type { BatchKind, BatchLine } from "../storage/batch-store";
import { lineError } from "./batch-worker";
import { BATCH_ENDPOINTS, type BatchEndpoint } from "./run-line";
import { Slicer } from "../vocabulary/loop-turns";
import { fileLines } from "../http/file-lines";
import { MAX_JSON_DEPTH } from "../request/read-body";
import { depthWithin } from "../http/json-depth";
import { nameProblem } from "../storage/clean-text";

/** The longest `custom_id` of a chat-family batch line (a messages batch's: 64 of `[A-Za-z0-9_-]`, as its API says). */
export const MAX_CUSTOM_ID = 512;

type NewLine = Omit<BatchLine, "batch_id" | "grp" | "upstream_result" | "reserved_usd" | "hook_answers">;

/** A checked line to run, or a line written off at once (malformed: it goes to the error file). */
function pending(
  n: number,
  customId: string,
  url: BatchEndpoint | "/v1/messages",
  body: Record<string, unknown>,
): NewLine {
  return {
    n,
    custom_id: customId,
    request: JSON.stringify({ url, body }),
    state: "pending",
    result: null,
    failed: false,
  };
}

function malformed(kind: BatchKind, n: number, customId: string, message: string): NewLine {
  return {
    n,
    custom_id: customId,
    request: "{}",
    state: "done",
    result: lineError({ kind }, customId, "invalid_request", message),
    failed: true,
  };
}

/** Refused as a whole: more lines than the limit. */
function tooManyLines(count: number, limits: BatchConfig, param: string) {
  return invalid(
    `The batch holds ${count} requests; at most ${limits.maxLines} are taken (TURNPIKE_BATCH_MAX_LINES).`,
    param,
  );
}

/**
 * The lines of a chat-family batch input file (JSONL of `{custom_id, method, url, body}`), given
 * as the store reads it, a chunk at a time, for `endpoint`. A line over the size limit refuses
 * the batch (a 400 naming the line), as do more lines than the limit; any other mistake in a
 * line makes that line an error-file line and the rest run.
 */
export async function openaiLines(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  endpoint: BatchEndpoint,
  limits: BatchConfig,
): Promise<NewLine[]> {
  const seen = new Set<string>();
  // Each line is parsed and checked in turn, the event loop given a turn every few milliseconds:
  // a file of 50,000 lines is seconds of work, which must not hold every other request.
  const slicer = new Slicer();
  const out: NewLine[] = [];
  let count = 0;
  for await (const l of fileLines(chunks, limits.maxLineBytes)) {
    await slicer.pause();
    if (l.text !== undefined && l.text.trim() === "") continue;
    count++;
    // Past the limit the lines are only counted, to name their number.
    if (count > limits.maxLines) continue;
    if (l.text === undefined) throw lineTooLong(count, l.size, limits);
    out.push(openaiLine(l.text, count - 1, seen, endpoint));
  }
  if (count === 0) throw invalid("The input file holds no requests.", "input_file_id");
  if (count > limits.maxLines) throw tooManyLines(count, limits, "input_file_id");
  return out;
}

const lineTooLong = (n: number, size: number, limits: BatchConfig) =>
  invalid(
    `Line ${n} of the input file is ${size} bytes; a line may hold at most ${limits.maxLineBytes} (TURNPIKE_BATCH_MAX_LINE_KB).`,
    "input_file_id",
  );

/** Line `i` of a chat-family input file, checked (or written off as malformed). */
function openaiLine(text: string, i: number, seen: Set<string>, endpoint: BatchEndpoint): NewLine {
  const n = i + 1;
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return malformed("openai", n, `line-${n}`, `Line ${n} is not valid JSON.`);
  }
  // A line nested thousands deep parses, then overflows the stack of whatever serialises it
  // (the line's own record, below): refused with the batch, as a request body is (request/read-body.ts).
  if (!depthWithin(line, MAX_JSON_DEPTH))
    throw invalid(
      `Line ${n} of the input file nests deeper than the limit of ${MAX_JSON_DEPTH} levels of JSON.`,
      "input_file_id",
    );
  if (!isRecord(line) || typeof line.custom_id !== "string" || line.custom_id === "")
    return malformed("openai", n, `line-${n}`, `Line ${n} has no \`custom_id\` string.`);
  const id = line.custom_id;
  // Kept, logged and written back in result files: printable text of a bounded length only.
  const idProblem = nameProblem(id, MAX_CUSTOM_ID);
  if (idProblem)
    return malformed(
      "openai",
      n,
      `line-${n}`,
      `Line ${n}: its \`custom_id\` is refused (${idProblem}): it must be 1 to ${MAX_CUSTOM_ID} printable characters.`,
    );
  if (seen.has(id))
    return malformed(
      "openai",
      n,
      id,
      `Line ${n} repeats the custom_id ${JSON.stringify(id)}; each line needs its own.`,
    );
  seen.add(id);
  if (line.method !== "POST") return malformed("openai", n, id, `Line ${n}: \`method\` must be POST.`);
  if (line.url !== endpoint)
    return malformed(
      "openai",
      n,
      id,
      `Line ${n}: \`url\` is ${JSON.stringify(line.url)}, but this batch's endpoint is ${endpoint}.`,
    );
  if (!isRecord(line.body) || typeof line.body.model !== "string")
    return malformed("openai", n, id, `Line ${n}: \`body\` must be a request object naming a \`model\`.`);
  if (line.body.stream === true) return malformed("openai", n, id, `Line ${n}: a batch line cannot stream.`);
  return pending(n, id, endpoint, line.body);
}

/** The lines of a messages batch (`requests: [{custom_id, params}]`), the same rules. */
export async function messagesLines(body: Record<string, unknown>, limits: BatchConfig): Promise<NewLine[]> {
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0)
    throw invalid("`requests` must be a non-empty array of {custom_id, params}.", "requests");
  if (requests.length > limits.maxLines) throw tooManyLines(requests.length, limits, "requests");
  const seen = new Set<string>();
  const slicer = new Slicer();
  const out: NewLine[] = [];
  for (let i = 0; i < requests.length; i++) {
    out.push(messagesLine(requests[i], i, seen, limits));
    await slicer.pause();
  }
  return out;
}

/** Request `i` of a messages batch, checked (or written off as malformed). */
function messagesLine(r: unknown, i: number, seen: Set<string>, limits: BatchConfig): NewLine {
  const n = i + 1;
  const size = Buffer.byteLength(JSON.stringify(r));
  if (size > limits.maxLineBytes)
    throw invalid(
      `requests[${i}] is ${size} bytes; a request may hold at most ${limits.maxLineBytes} (TURNPIKE_BATCH_MAX_LINE_KB).`,
      `requests[${i}]`,
    );
  if (!isRecord(r) || typeof r.custom_id !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(r.custom_id)) {
    throw invalid(`requests[${i}].custom_id must be 1 to 64 letters, digits, _ or -.`, `requests[${i}].custom_id`);
  }
  const id = r.custom_id;
  if (seen.has(id))
    throw invalid(
      `requests[${i}].custom_id ${JSON.stringify(id)} is used twice; each request needs its own.`,
      `requests[${i}].custom_id`,
    );
  seen.add(id);
  if (!isRecord(r.params) || typeof r.params.model !== "string")
    return malformed("messages", n, id, `requests[${i}].params must be a messages request naming a \`model\`.`);
  if (r.params.stream === true)
    return malformed("messages", n, id, `requests[${i}].params: a batch request cannot stream.`);
  return pending(n, id, "/v1/messages", r.params);
}

export { BATCH_ENDPOINTS, fileLines };
