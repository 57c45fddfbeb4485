/** One JSON or streamed call through the gateway, read into an outcome (variants, replays). */
import type { CapturedRequest } from "@turnpike/simulator";
import { expect } from "bun:test";
import { readSSE, type Harness } from "../harness";
import { readJson, type Outcome, type StreamError } from "./outcome";
import { readChatJson, readChatStream } from "./read-chat";
import { readMessagesJson, readMessagesStream } from "./read-messages";
import { CLIENT_PATH, type ClientFormat } from "./upstreams";

export interface JsonCall {
  outcome: Outcome;
  sent: CapturedRequest;
}

export interface StreamCall extends JsonCall {
  /** messages clients: `message_start.usage.input_tokens`. */
  startInput?: number;
  error?: StreamError;
  /** chat clients: whether a usage chunk came. */
  usageChunk?: boolean;
}

function post(h: Harness, client: ClientFormat, body: Record<string, unknown>): Promise<Response> {
  return h.call(CLIENT_PATH[client], { method: "POST", dialect: client, body: JSON.stringify(body) });
}

export async function callJson(h: Harness, client: ClientFormat, body: Record<string, unknown>): Promise<JsonCall> {
  const res = await post(h, client, { ...body, stream: false });
  expect(res.status).toBe(200);
  const sent = h.gw.simulator!.requests.at(-1)!;
  const json = await readJson(res);
  const model = String(body.model);
  return { outcome: client === "messages" ? readMessagesJson(json, model) : readChatJson(json, model), sent };
}

/** A streamed call; chat clients ask for the usage chunk unless `includeUsage` is false. */
export async function callStream(
  h: Harness,
  client: ClientFormat,
  body: Record<string, unknown>,
  includeUsage = true,
): Promise<StreamCall> {
  const streamBody =
    client === "chat" && includeUsage
      ? { ...body, stream: true, stream_options: { include_usage: true } }
      : { ...body, stream: true };
  const res = await post(h, client, streamBody);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  const sent = h.gw.simulator!.requests.at(-1)!;
  const frames = await readSSE(res);
  const model = String(body.model);
  if (client === "messages") {
    const read = readMessagesStream(frames, model);
    return { outcome: read.outcome, sent, startInput: read.startInput, ...(read.error ? { error: read.error } : {}) };
  }
  const read = readChatStream(frames, model);
  return { outcome: read.outcome, sent, usageChunk: read.usageChunk, ...(read.error ? { error: read.error } : {}) };
}
