/** Well-formed vendor replies and streams, with the usage numbers a test chooses. */

export function messagesReply(usage: unknown, text = "Hello") {
  return JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "alpha-haiku-4-5",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage,
  });
}

export function chatReply(usage: unknown, text = "Hello") {
  return JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "beta-5",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage,
  });
}

const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A messages-protocol stream, frame by frame: start, one text block, the end (cut off after `cutAfter` frames). */
export function messagesStream(
  opts: { input?: unknown; output?: unknown; text?: string; cutAfter?: number } = {},
): string[] {
  const frames = [
    ev("message_start", {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "alpha-haiku-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: opts.input ?? 12, output_tokens: 1 },
      },
    }),
    ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ev("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: opts.text ?? "Hello" },
    }),
    ev("content_block_stop", { type: "content_block_stop", index: 0 }),
    ev("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: opts.output ?? 5 },
    }),
    ev("message_stop", { type: "message_stop" }),
  ];
  return frames.slice(0, opts.cutAfter ?? frames.length);
}

/** A chat-protocol stream: a role chunk, one text chunk, the finish, the usage chunk, [DONE]. */
export function chatStream(opts: { usage?: unknown; text?: string; cutAfter?: number } = {}): string[] {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "beta-5", choices, ...extra })}\n\n`;
  const frames = [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    chunk([{ index: 0, delta: { content: opts.text ?? "Hello" }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], { usage: opts.usage ?? { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } }),
    "data: [DONE]\n\n",
  ];
  return frames.slice(0, opts.cutAfter ?? frames.length);
}
