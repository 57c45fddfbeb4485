/** One streamed call through the gateway in any client format, read as the official clients read it. */
import { expect } from "bun:test";
import { readSSE, type Harness } from "../harness";
import type { Outcome, StreamError } from "../conformance/outcome";
import { readChatStream } from "../conformance/read-chat";
import { readGenerateStream } from "../conformance/read-generate";
import { readMessagesStream } from "../conformance/read-messages";
import { readResponsesStream } from "../conformance/read-responses";
import { tableClientPath, type TableClient } from "../conformance/upstreams";

export interface Streamed {
  res: Response;
  outcome: Outcome;
  error?: StreamError | undefined;
  /** The raw frames, in order. */
  frames: { event?: string; data: string }[];
}

/** The request body of `client` for one user turn (tools offered when `tools`). */
export function bodyOf(client: TableClient, model: string, prompt: string, tools = false): Record<string, unknown> {
  const tool = {
    name: "get_weather",
    description: "The weather in a city",
    schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  };
  switch (client) {
    case "messages":
      return {
        model,
        max_tokens: 400,
        stream: true,
        messages: [{ role: "user", content: prompt }],
        ...(tools ? { tools: [{ name: tool.name, description: tool.description, input_schema: tool.schema }] } : {}),
      };
    case "chat":
      return {
        model,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: prompt }],
        ...(tools
          ? {
              tools: [
                {
                  type: "function",
                  function: { name: tool.name, description: tool.description, parameters: tool.schema },
                },
              ],
            }
          : {}),
      };
    case "responses":
      return {
        model,
        stream: true,
        input: prompt,
        ...(tools
          ? { tools: [{ type: "function", name: tool.name, description: tool.description, parameters: tool.schema }] }
          : {}),
      };
    case "generate":
      return {
        contents: [{ role: "user", parts: [{ text: prompt }] }],
        ...(tools
          ? {
              tools: [
                { functionDeclarations: [{ name: tool.name, description: tool.description, parameters: tool.schema }] },
              ],
            }
          : {}),
      };
    default: {
      const never: never = client;
      throw new Error(`unknown client ${String(never)}`);
    }
  }
}

/** Posts a streamed call and reads it with the format's reader (which checks the format's wire rules). */
export async function stream(
  h: Harness,
  client: TableClient,
  body: Record<string, unknown>,
  model: string,
  raw = false,
): Promise<Streamed> {
  const headers: Record<string, string> = client === "generate" ? { "x-goog-api-key": h.key } : {};
  const res = await h.call(tableClientPath(client, model, true), {
    method: "POST",
    ...(client === "messages" || client === "chat" || client === "responses" ? { dialect: client } : {}),
    headers,
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const frames = await readSSE(res);
  if (raw) return { res, outcome: undefined as never, frames };
  const read =
    client === "messages"
      ? readMessagesStream(frames, model)
      : client === "chat"
        ? readChatStream(frames, model)
        : client === "responses"
          ? readResponsesStream(frames, model)
          : readGenerateStream(frames, model);
  return { res, outcome: read.outcome, error: read.error, frames };
}
