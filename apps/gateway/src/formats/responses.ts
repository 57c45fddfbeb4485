import {
  MessagesToResponsesMachine,
  convertChatRequestToMessages,
  convertMessagesResponseToResponses,
  clientPath,
  convertResponsesRequestToChat,
  inClientTerms,
  randomId,
  responsesEnvelope,
  type NamespacedName,
  type Warning,
} from "@turnpike/providers";
import {
  RESPONSES_TERMINAL_EVENTS,
  type MessagesRequest,
  validateResponsesRequest,
  type ResponsesInputItem,
  type ResponsesOutputItem,
  type ResponsesRequest,
  type ResponsesResponse,
} from "@turnpike/schema";
import { formatSSE } from "@turnpike/schema/sse";
import { validationError } from "../vocabulary/client-errors";
import { DEFAULT_MAX_TOKENS, chatFormat } from "./chat";
import { dropUnknownKnobs, RESPONSES_OPEN, refuseUnknownContent } from "./open-rest";
import { reasoningProofs, withoutReasoning } from "./responses-reasoning";
import type { ClientFormat, ClientRequest } from "./client-format";

/** The first line of any event that ends a stream, found in one pass over a piece. */
const TERMINAL_LINE = new RegExp(
  `event: (?:${[...RESPONSES_TERMINAL_EVENTS, "error"].map((e) => e.replaceAll(".", "\\.")).join("|")})\n`,
);

/**
 * The piece holds a whole frame that ends the stream. A terminal event carries the whole
 * response (tools and instructions repeated), so a relayed piece may end inside it: the stream
 * ends only once its blank line has gone out too. The first terminal line decides: a later one
 * with its blank line would have that blank line after the first too.
 */
function holdsTerminalFrame(piece: string): boolean {
  const found = TERMINAL_LINE.exec(piece);
  return found !== null && piece.indexOf("\n\n", found.index) !== -1;
}

/** The input item types Turnpike reads; a vendor's others (`web_search_call`, `item_reference`, …) are only carried. */
const READ_ITEMS = new Set([
  "message",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "reasoning",
]);
/** What stands in for a vendor's own item while the rest of the input is validated. */
const STAND_IN: ResponsesInputItem = { type: "reasoning" };

/**
 * Input items of types only a Responses vendor knows (the ones its replies hold, replayed by a
 * client), by position: a passthrough carries them as they are; a translation leaves them out
 * with a warning (convert-responses-request-to-chat.ts).
 */
function vendorItems(body: Readonly<Record<string, unknown>>): Map<number, unknown> {
  const out = new Map<number, unknown>();
  if (!Array.isArray(body.input)) return out;
  body.input.forEach((item: unknown, i) => {
    const type = typeof item === "object" && item !== null ? (item as { type?: unknown }).type : undefined; // an object: checked on the left
    if (typeof type === "string" && !READ_ITEMS.has(type)) out.set(i, item);
  });
  return out;
}

/** Validates a body whose vendor-only items are checked for nothing but being objects with a type. */
function validateBody(body: Record<string, unknown>): ResponsesRequest {
  const vendor = vendorItems(body);
  const input = body.input as unknown[]; // a list whenever `vendor` is not empty
  const checked = validateResponsesRequest(
    vendor.size ? { ...body, input: input.map((item, i) => (vendor.has(i) ? STAND_IN : item)) } : body,
  );
  if (!checked.ok) throw validationError(checked.issues);
  if (!vendor.size) return checked.value;
  const items = checked.value.input as ResponsesInputItem[]; // a list, as the body's
  // Carried as the client sent them; the translators read them by their `type` alone.
  return {
    ...checked.value,
    input: items.map((item, i) => (vendor.has(i) ? (vendor.get(i) as ResponsesInputItem) : item)),
  };
}

/** An output item of a stored reply as the input item that replays it. */
function replayItem(item: ResponsesOutputItem): ResponsesInputItem {
  switch (item.type) {
    case "message":
      return {
        type: "message",
        role: "assistant",
        content: item.content.map((p) => ({ type: "output_text" as const, text: p.text })),
      };
    case "function_call":
      return {
        type: "function_call",
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
        ...(item.namespace ? { namespace: item.namespace } : {}),
      };
    case "custom_tool_call":
      return { type: "custom_tool_call", call_id: item.call_id, name: item.name, input: item.input };
    case "reasoning":
      return {
        type: "reasoning",
        id: item.id,
        summary: item.summary,
        ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}),
      };
    default: {
      const never: never = item;
      return never;
    }
  }
}

/** The input of a request as a list of items (a string is one user message). */
function inputItems(request: ResponsesRequest): ResponsesInputItem[] {
  return typeof request.input === "string" ? [{ role: "user", content: request.input }] : request.input;
}

/** The same, of the body as the client sent it (validated, so `input` is a string or a list). */
function bodyItems(body: Readonly<Record<string, unknown>>): unknown[] {
  return typeof body.input === "string"
    ? [{ role: "user", content: body.input }]
    : Array.isArray(body.input)
      ? body.input
      : [];
}

/**
 * A stored reply's output as a Responses vendor takes it back: its items as they were, except
 * reasoning items without encrypted content (one Turnpike wrote, or one the vendor may not have
 * kept: neither can be opened upstream). See docs/protocols.md §5.4.
 */
function replayUpstream(output: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return output.filter(
    (item) =>
      item.type !== "reasoning" || (typeof item.encrypted_content === "string" && item.encrypted_content !== ""),
  );
}

/** A request's prompt as one text turn (its instructions, input and tools as JSON), for counting only. */
function promptAsText(request: ResponsesRequest, body: Readonly<Record<string, unknown>>): MessagesRequest {
  const text = JSON.stringify({ input: body.input, tools: body.tools });
  return {
    model: request.model,
    max_tokens: DEFAULT_MAX_TOKENS,
    ...(request.instructions ? { system: request.instructions } : {}),
    messages: [{ role: "user", content: text }],
  };
}

/**
 * A validated Responses request as the pipeline sees it. `history` holds the conversation of the
 * stored reply it continues, already put before its own input.
 */
function responsesClient(
  request: ResponsesRequest,
  body: Readonly<Record<string, unknown>>,
  continued?: string,
): ClientRequest {
  // One identity for the reply, whether it is written as JSON or as a stream.
  const id = randomId("resp_");
  const createdAt = Math.floor(Date.now() / 1000);
  // The reply repeats the stored response it continues, though the conversation now holds it.
  const echoed = continued === undefined ? request : { ...request, previous_response_id: continued };
  // Names of namespaced functions as offered upstream → as the client knows them.
  let namespaced: Record<string, NamespacedName> = {};
  // Custom tools offered upstream as function tools: their calls go back as custom_tool_call items.
  let custom: Record<string, true> = {};
  let written: ResponsesResponse | undefined;
  let serviceTier = "default";
  let machine: MessagesToResponsesMachine | undefined;
  // The vendor's own reply, when the request passed through to a Responses upstream.
  let passed: Record<string, unknown> | undefined;

  const client: ClientRequest = {
    model: request.model,
    stream: request.stream === true,
    body,
    includeUsage: true,
    toPivot(target) {
      // Toward another protocol: parts of unknown type are refused, an unknown knob value
      // dropped with a warning (open-rest.ts). Toward a Responses upstream they pass through (the
      // count below then reads the body as text if the converter cannot).
      let open: { body: ResponsesRequest; warnings: Warning[] } = { body: request, warnings: [] };
      if (target !== responsesFormat.passthroughProtocol) {
        refuseUnknownContent(request, RESPONSES_OPEN.parts, target);
        open = dropUnknownKnobs(request, RESPONSES_OPEN.knobs, target);
      }
      try {
        const chat = convertResponsesRequestToChat(open.body);
        namespaced = chat.namespaced;
        custom = chat.custom;
        let pivot: ReturnType<typeof convertChatRequestToMessages>;
        try {
          pivot = convertChatRequestToMessages(chat.request, { defaultMaxTokens: DEFAULT_MAX_TOKENS, target });
        } catch (e) {
          // Refused on the way to the pivot: named as the client named it, not as its chat form.
          throw inClientTerms(e, chat.request);
        }
        // Its warnings, too, name the Responses fields, not their chat form.
        const named = pivot.warnings.map((w) => ({ ...w, param: clientPath(chat.request, w.param) }));
        return { request: pivot.request, warnings: open.warnings.concat(chat.warnings, named) };
      } catch (e) {
        // Toward a Responses upstream the request passes through, and its pivot is wanted only to
        // count a prompt the vendor never reported: a body only the vendor reads (custom tools,
        // file URLs) is then counted as its text, so that the usage record is still written.
        if (target !== responsesFormat.passthroughProtocol) throw e;
        return { request: promptAsText(request, body), warnings: [] };
      }
    },
    encodeReply(reply, model) {
      written = convertMessagesResponseToResponses(reply, {
        model,
        request: echoed,
        id,
        createdAt,
        namespaced,
        custom,
        serviceTier,
      });
      return written;
    },
    servedAt(tier) {
      serviceTier = tier;
    },
    encoder(model, write) {
      machine = new MessagesToResponsesMachine(
        { model, request: echoed, id, createdAt, namespaced, custom, serviceTier },
        write,
      );
      return machine;
    },
    ...(request.previous_response_id ? { continues: request.previous_response_id } : {}),
    continueFrom(stored) {
      // Stored items were validated when their request came in; the output items are Turnpike's
      // own or, for a reply that passed through, a Responses vendor's (of the same shape).
      const earlier = stored.input_items as ResponsesInputItem[];
      const output = (stored.response.output ?? []) as ResponsesOutputItem[];
      const { previous_response_id: _continued, ...rest } = request;
      // A passthrough sends the whole conversation, as a translation does: the id is Turnpike's,
      // the vendor does not know it (docs/protocols.md §5.4).
      const { previous_response_id: _sent, ...sent } = body;
      const upstream = [
        ...(stored.input_items as Record<string, unknown>[]),
        ...replayUpstream(output),
        ...bodyItems(body),
      ];
      return responsesClient(
        { ...rest, input: [...earlier, ...output.map(replayItem), ...inputItems(request)] },
        { ...sent, input: upstream },
        request.previous_response_id ?? undefined,
      );
    },
    passedThrough(reply) {
      passed = reply;
    },
    thinkingProofs: () => reasoningProofs(body),
    withoutThinking(drop) {
      const out = withoutReasoning(body, drop);
      // The same body but for items removed: it validates as the original did.
      return out && { request: responsesFormat.validate(out.body), dropped: out.dropped };
    },
    inBandError(message) {
      // The `error` event, then the response it ends as failed (clients such as agents read the
      // reason from `response.failed`; a stream without a final response reads as cut off).
      const error = { code: "server_error", message };
      const response = responsesEnvelope(
        { model: request.model, request: echoed, id, createdAt },
        "failed",
        [],
        null,
        null,
        error,
      );
      return (
        responsesFormat.inBandError(message) +
        formatSSE({
          event: "response.failed",
          data: JSON.stringify({ type: "response.failed", sequence_number: 0, response }),
        })
      );
    },
    toStore() {
      // `store` defaults to true, as clients expect; a failed reply is not kept.
      const response = passed ?? written ?? machine?.final;
      if (request.store === false || !response || response.status === "failed") return undefined;
      // A passed-through conversation is kept as the vendor will take it back; a translated one
      // as the items Turnpike read.
      // A cut passthrough that went on (`resumed`) holds the vendor's items too.
      return { response, inputItems: passed || machine?.resumed ? bodyItems(body) : inputItems(request) };
    },
  };
  return client;
}

/**
 * The Responses format (`POST /v1/responses`). Requests reach the pivot through the chat
 * converter (decisions/0006-responses-through-chat.md); replies and streams are written from the
 * pivot by the Responses encoders. A Responses upstream is passed through to unchanged, so its
 * reasoning items and encrypted content reach the client as the vendor wrote them.
 */
export const responsesFormat: ClientFormat = {
  id: "responses",
  endpoint: "responses",
  pathPrefix: "/v1/responses",
  passthroughProtocol: "responses",
  inputAtStart: false,
  claims: () => false,
  validate: (body) => responsesClient(validateBody(body), body),
  inBandError: (message) =>
    formatSSE({
      event: "error",
      data: JSON.stringify({ type: "error", code: "server_error", message, param: null, sequence_number: 0 }),
    }),
  // A Responses stream's last event says how it ended (`response.completed` and the like): a
  // passthrough never has a terminator to complete.
  terminalFrame: "",
  isTerminal: holdsTerminalFrame,
  // Its errors, keep-alives, request ids and limit headers are the chat format's own: the same
  // clients read them (docs/protocols.md §5.2).
  keepAlive: chatFormat.keepAlive,
  renderError: chatFormat.renderError,
  idHeaders: chatFormat.idHeaders,
  limitHeaders: chatFormat.limitHeaders,
};
