import { GatewayError, responsesEnvelope } from "@turnpike/providers";
import type { ResponsesRequest } from "@turnpike/schema";
import { SSEDecoderStream } from "@turnpike/schema/sse";
import type { ServerWebSocket } from "bun";
import type { WebsocketLimits } from "../config/config";
import type { GatewayDeps } from "../wiring/deps";
import { FORMATS } from "../formats";
import { authenticate } from "../access/authenticate";
import type { Connection } from "../http/client-address";
import { newContext } from "../request/context";
import { handleInference } from "../pipeline/inference";
import { newRequestId } from "../http/request-id";
import { errorResponse, toGatewayError } from "../request/respond";
import { parseJsonWithin } from "../request/read-body";
import { LARGE_BODY_CHARS, loopTurn } from "../vocabulary/loop-turns";
import type { GuardrailRun } from "../guardrails/run";
import { guardFor, storedForm } from "../guardrails/surfaces";
import type { KeyRecord } from "../storage/store";

/**
 * The Responses format's WebSocket transport (docs/protocols.md, "Responses over WebSocket"): a
 * second front door to the same pipeline. `GET /v1/responses` with an upgrade is authenticated
 * like the HTTP route; then every `response.create` frame is one request through authenticate →
 * … → meter, its server-sent events written one JSON text frame each. A refusal before the stream
 * is one `{"type":"error","status":…}` frame; the socket stays open for the next turn.
 *
 * Continuation: each socket remembers the conversations of its own last replies, so a turn may
 * send only its new items with `previous_response_id`, whether or not the reply was stored (a
 * stored one not on this socket is still found by the HTTP route's own lookup). `generate: false`
 * warms a conversation without calling a model: its id can be continued from, nothing is billed.
 * With guardrails, a remembered conversation is held as a stored response is (`storedForm`): the
 * placeholders the upstream saw, never a value a policy took out (docs/guardrails.md).
 */

/** Replies remembered per socket: an agent continues its last one; a few cover forks and retries. */
const REMEMBERED = 8;

/** Headers of the handshake that belong to the socket, not to each turn's request. */
const SOCKET_HEADERS = [
  "connection",
  "upgrade",
  "content-length",
  "transfer-encoding",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-protocol",
];

/** Rate-limit and id headers a refused turn carries in its error frame, as the HTTP reply would. */
const ERROR_FRAME_HEADERS = /^(retry-after|x-ratelimit-|x-request-id|x-turnpike-)/;

/** What one open socket holds: the handshake (re-used, with its key, for each turn) and its turns. */
interface SocketState {
  handshake: Request;
  /** The handshake's key (each turn authenticates again): a warmed conversation is kept under its guardrails. */
  key: KeyRecord;
  peer: string;
  /** Reply id → the whole conversation up to and including that reply's output. */
  conversations: Map<string, unknown[]>;
  /** Turns run one after another, in the order their frames arrived. */
  queue: Promise<void>;
  /** Frames received and not yet answered (the turn in flight included), and their bytes: bounded at arrival. */
  queuedFrames: number;
  queuedBytes: number;
  /** The turn in flight's abort: a dropped socket drops its stream, billed like a dropped HTTP stream. */
  inFlight: AbortController | undefined;
  closed: boolean;
}

interface SocketData {
  open(ws: ServerWebSocket<SocketData>): void;
  message(ws: ServerWebSocket<SocketData>, message: string | Buffer): void;
  close(ws: ServerWebSocket<SocketData>): void;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** An error frame as the format's WebSocket clients read it: the HTTP status beside the error body. */
function errorFrame(status: number, error: unknown, headers: Record<string, string> = {}): string {
  return JSON.stringify({ type: "error", status, error, headers });
}

/** `input` as a list of items (a bare string is one user message). */
function inputItems(input: unknown): unknown[] {
  if (input === undefined || input === null) return [];
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  return Array.isArray(input) ? input : [input];
}

/** A frame's size in bytes as the client sent it. */
const frameBytes = (message: string | Buffer) =>
  typeof message === "string" ? Buffer.byteLength(message) : message.byteLength;

/**
 * A frame refused on arrival, before it is queued (issue 41: frames of 8 MiB queued without
 * bound held a gigabyte): one error frame; the frame is let go at once, and the socket serves on.
 */
function overQueue(limits: WebsocketLimits, state: SocketState, bytes: number): string | undefined {
  if (bytes > limits.maxQueuedBytes)
    return errorFrame(413, {
      type: "request_too_large",
      message: `This frame is ${bytes} bytes; a socket holds at most ${limits.maxQueuedBytes} bytes of frames (responses_websocket.max_queued_bytes).`,
    });
  if (state.queuedFrames >= limits.maxQueuedFrames || state.queuedBytes + bytes > limits.maxQueuedBytes)
    return errorFrame(429, {
      type: "rate_limit_error",
      message: `This socket already holds ${state.queuedFrames} frames (${state.queuedBytes} bytes) not yet answered; at most ${limits.maxQueuedFrames} frames and ${limits.maxQueuedBytes} bytes are held (responses_websocket.max_queued_frames, max_queued_bytes). Send the next frame once a reply has completed.`,
    });
  return undefined;
}

/** `GET /v1/responses`: the WebSocket upgrade, or 426 when the transport is off or no upgrade was asked. */
export function responsesWebsocketRoute(deps: GatewayDeps) {
  const limits = deps.config.websocketLimits;
  /** Open sockets per key id on this instance. */
  const open = new Map<string, number>();
  return async (request: Request, server: Connection): Promise<Response | undefined> => {
    const format = FORMATS.responses;
    const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    if (!deps.config.responsesWebsocket || !upgrade) {
      // 426 is what makes the format's coding agent fall back to HTTP at once.
      const requestId = newRequestId();
      const why = deps.config.responsesWebsocket
        ? "GET /v1/responses is the WebSocket transport: ask for an upgrade, or POST /v1/responses"
        : "the WebSocket transport is switched off here (TURNPIKE_RESPONSES_WEBSOCKET=off): POST /v1/responses";
      const err = new GatewayError({
        status: 426,
        type: "invalid_request_error",
        code: "upgrade_required",
        message: why,
        headers: { upgrade: "websocket" },
      });
      return errorResponse(format, err, { logger: deps.logger, request, requestId });
    }
    const ctx = newContext(request, format, server, deps.config.trustedProxies);
    let key: KeyRecord;
    try {
      // The key is checked at the handshake (a bad one gets its 401 as an HTTP answer) and again on every turn.
      key = await authenticate(deps, ctx);
      if ((open.get(key.id) ?? 0) >= limits.maxSocketsPerKey)
        throw new GatewayError({
          status: 429,
          type: "rate_limit_error",
          code: "rate_limit_exceeded",
          message: `This key already holds ${limits.maxSocketsPerKey} open Responses WebSockets on this gateway, its limit (responses_websocket.max_sockets_per_key); close one first.`,
        });
    } catch (e) {
      return errorResponse(format, toGatewayError(e, deps.logger, ctx.id), {
        logger: deps.logger,
        request,
        requestId: ctx.id,
      });
    }
    const keyId = key.id;
    const state: SocketState = {
      handshake: request,
      key,
      peer: ctx.address(),
      conversations: new Map(),
      queue: Promise.resolve(),
      queuedFrames: 0,
      queuedBytes: 0,
      inFlight: undefined,
      closed: false,
    };
    const data: SocketData = {
      open() {},
      message(ws, message) {
        const bytes = frameBytes(message);
        const refusal = overQueue(limits, state, bytes);
        if (refusal) {
          deps.logger.info("responses websocket frame refused", { reason: "queue bound", bytes });
          ws.send(refusal);
          return;
        }
        state.queuedFrames++;
        state.queuedBytes += bytes;
        state.queue = state.queue
          .then(() => turn(deps, state, ws, typeof message === "string" ? message : message.toString("utf8")))
          .catch((e: unknown) => {
            deps.logger.error("responses websocket turn failed", { request_id: ctx.id }, e);
          })
          .finally(() => {
            state.queuedFrames--;
            state.queuedBytes -= bytes;
          });
      },
      close() {
        if (!state.closed) open.set(keyId, (open.get(keyId) ?? 1) - 1);
        if (open.get(keyId) === 0) open.delete(keyId);
        state.closed = true;
        state.inFlight?.abort();
      },
    };
    // Elysia's own WebSocket handler calls the open/message/close that the socket's data carries.
    // Counted from the upgrade (before the socket's open), so that handshakes at once cannot pass the cap.
    open.set(keyId, (open.get(keyId) ?? 0) + 1);
    if (server.upgrade?.(request, { data })) return undefined;
    open.set(keyId, (open.get(keyId) ?? 1) - 1);
    return errorResponse(
      format,
      new GatewayError({
        status: 400,
        type: "invalid_request_error",
        message: "the WebSocket upgrade failed: check the Sec-WebSocket-Key and Sec-WebSocket-Version headers",
      }),
      { logger: deps.logger, request, requestId: ctx.id },
    );
  };
}

/** One frame from the client: a `response.create` is one request through the pipeline. */
async function turn(
  deps: GatewayDeps,
  state: SocketState,
  ws: ServerWebSocket<SocketData>,
  text: string,
): Promise<void> {
  // A frame queued behind a turn whose socket then closed has nobody to answer: it is dropped unread.
  if (state.closed) return;
  let frame: unknown;
  try {
    // A large frame is counted off the event loop first, like an HTTP body (http/json-census.ts).
    frame = await parseJsonWithin(text, deps.config.maxBodyValues);
  } catch (e) {
    if (e instanceof GatewayError && e.status === 413) return refuse(deps, ws, 413, e.message);
    frame = undefined;
  }
  if (!isObject(frame) || typeof frame.type !== "string") {
    return refuse(deps, ws, 400, "each frame is a JSON object with a type, such as response.create");
  }
  // The client's note that it has handled a reply: nothing to do.
  if (frame.type === "response.processed") return;
  if (frame.type !== "response.create")
    return refuse(
      deps,
      ws,
      400,
      `type: ${JSON.stringify(frame.type)} is not a frame this endpoint takes; send response.create`,
    );

  // The frame's next steps (and the pipeline's) wait for a turn of the loop, as a large body's do.
  if (text.length > LARGE_BODY_CHARS) await loopTurn();
  const { type: _type, generate, background: _background, ...body } = frame;
  // Continuing a reply this socket made: its conversation goes before the new items.
  const previousId = typeof body.previous_response_id === "string" ? body.previous_response_id : undefined;
  const previous = previousId === undefined ? undefined : state.conversations.get(previousId);
  const input = [...(previous ?? []), ...inputItems(body.input)];
  if (previous) {
    body.input = input;
    delete body.previous_response_id;
  }
  if (generate === false) return warm(deps, state, ws, body, input, previousId);

  body.stream = true;
  const headers = new Headers(state.handshake.headers);
  for (const h of SOCKET_HEADERS) headers.delete(h);
  headers.set("content-type", "application/json");
  const abort = new AbortController();
  state.inFlight = abort;
  const request = new Request(state.handshake.url, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  // The socket's peer is each turn's client address; a turn has no timeout of its own (the socket's pings keep it).
  const connection: Connection = { requestIP: () => ({ address: state.peer }), timeout: () => {} };
  let guard: GuardrailRun | undefined;
  try {
    const res = await handleInference(deps, request, FORMATS.responses, connection, undefined, {
      guarded: (run) => {
        guard = run;
      },
    });
    if (res.status !== 200 || !res.body) return await forwardError(ws, res);
    const reader = res.body.pipeThrough(new SSEDecoderStream()).getReader();
    // Cancelling the reader cancels the relayed stream, and with it the upstream call. The socket
    // may have closed while the pipeline was still answering: then it is cancelled at once (a
    // listener added after the abort would never run, and the upstream would be held open).
    const cancel = () => void reader.cancel("the client went away").catch(() => {});
    if (abort.signal.aborted) cancel();
    else abort.signal.addEventListener("abort", cancel, { once: true });
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (state.closed) {
        await reader.cancel("the client went away").catch(() => {});
        break;
      }
      // The reply repeats the socket's reply it continues, which the pipeline saw as plain input.
      const data = previous && LIFECYCLE.test(value.event ?? "") ? continuing(value.data, previousId!) : value.data;
      ws.send(data);
      if (value.event === "response.completed") remember(state, input, data, guard);
    }
  } finally {
    if (state.inFlight === abort) state.inFlight = undefined;
  }
}

/** A refusal before any stream: one error frame, with the headers the HTTP answer carried. */
async function forwardError(ws: ServerWebSocket<SocketData>, res: Response): Promise<void> {
  const text = await res.text();
  let error: unknown = { type: "api_error", message: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) error = parsed.error ?? parsed;
  } catch {
    // A body that is not JSON is passed on as the message.
  }
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (ERROR_FRAME_HEADERS.test(k)) headers[k] = v;
  });
  ws.send(errorFrame(res.status, error, headers));
}

function refuse(deps: GatewayDeps, ws: ServerWebSocket<SocketData>, status: number, message: string): void {
  deps.logger.info("responses websocket frame refused", { status, reason: message });
  ws.send(errorFrame(status, { type: "invalid_request_error", message }));
}

/**
 * After a completed reply: its whole conversation, under its id, for the next turn to continue;
 * with guardrails, in the redacted form a stored response has.
 */
function remember(state: SocketState, input: unknown[], data: string, guard: GuardrailRun | undefined): void {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    return;
  }
  const response = isObject(event) && isObject(event.response) ? event.response : undefined;
  if (!response || typeof response.id !== "string") return;
  const output = Array.isArray(response.output) ? response.output : [];
  const conversation = [...input, ...output];
  keep(state, response.id, guard ? storedForm(guard, conversation) : conversation);
}

function keep(state: SocketState, id: string, conversation: unknown[]): void {
  state.conversations.set(id, conversation);
  // Oldest first in a Map: drop beyond the last few.
  for (const old of state.conversations.keys()) {
    if (state.conversations.size <= REMEMBERED) break;
    state.conversations.delete(old);
  }
}

/** The events whose `response` is the whole response object. */
const LIFECYCLE = /^response\.(created|in_progress|completed|incomplete|failed)$/;

/**
 * An event's response naming the reply it continues. The key is matched with its quotes: inside a
 * JSON string they would be escaped, so only the response's own field can match.
 */
function continuing(data: string, previousId: string): string {
  return data.replace('"previous_response_id":null', `"previous_response_id":${JSON.stringify(previousId)}`);
}

/** `generate: false`: the conversation is kept under a new reply id; no model is called, nothing billed. */
function warm(
  deps: GatewayDeps,
  state: SocketState,
  ws: ServerWebSocket<SocketData>,
  body: Json,
  input: unknown[],
  previousId: string | undefined,
): void {
  const id = `resp_${crypto.randomUUID().replaceAll("-", "")}`;
  // No request runs, so no run of the key's guardrails: one of their own gives the redacted form.
  const guard = guardFor(deps.config.guardrails, state.key, id);
  keep(state, id, guard ? storedForm(guard, input) : input);
  const createdAt = Math.floor(Date.now() / 1000);
  // The frame was not validated (nothing runs): only well-typed settings are repeated.
  const request: ResponsesRequest = {
    model: typeof body.model === "string" ? body.model : "",
    input: [],
    ...(typeof body.instructions === "string" ? { instructions: body.instructions } : {}),
    ...(typeof body.store === "boolean" ? { store: body.store } : {}),
    ...(previousId === undefined ? {} : { previous_response_id: previousId }),
  };
  const response = responsesEnvelope(
    { model: request.model, request, id, createdAt, completedAt: createdAt },
    "completed",
    [],
    {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    },
  );
  ws.send(
    JSON.stringify({
      type: "response.created",
      sequence_number: 0,
      response: { ...response, status: "in_progress", completed_at: null },
    }),
  );
  ws.send(JSON.stringify({ type: "response.completed", sequence_number: 1, response }));
}
