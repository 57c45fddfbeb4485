/**
 * The events of a Responses stream as TypeBox schemas and types (docs/protocols.md §5.3): each
 * event's `type` equals its `event:` line, and every event carries a `sequence_number` that
 * counts from 0. One schema per name of `RESPONSES_STREAM_EVENT_TYPES`; the type check at
 * the bottom proves the union and the name list agree.
 */
import { Type, type Static, type TProperties } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";
import {
  ResponsesOutputItem,
  ResponsesOutputText,
  ResponsesResponse,
  ResponsesSummaryText,
  type ResponsesStreamEventType,
} from "./responses-response.js";

/** `{type, ...fields, sequence_number}` for one event name. */
function event<T extends ResponsesStreamEventType, P extends TProperties>(type: T, fields: P) {
  return Type.Object({ type: Type.Literal(type), sequence_number: Type.Integer({ minimum: 0 }), ...fields });
}

const inItem = { item_id: Type.String(), output_index: Type.Integer({ minimum: 0 }) };
const inPart = { ...inItem, content_index: Type.Integer({ minimum: 0 }) };
const inSummary = { ...inItem, summary_index: Type.Integer({ minimum: 0 }) };

export const ResponsesCreatedEvent = event("response.created", { response: ResponsesResponse });
export type ResponsesCreatedEvent = Static<typeof ResponsesCreatedEvent>;
export const ResponsesInProgressEvent = event("response.in_progress", { response: ResponsesResponse });
export type ResponsesInProgressEvent = Static<typeof ResponsesInProgressEvent>;
export const ResponsesCompletedEvent = event("response.completed", { response: ResponsesResponse });
export type ResponsesCompletedEvent = Static<typeof ResponsesCompletedEvent>;
export const ResponsesIncompleteEvent = event("response.incomplete", { response: ResponsesResponse });
export type ResponsesIncompleteEvent = Static<typeof ResponsesIncompleteEvent>;
export const ResponsesFailedEvent = event("response.failed", { response: ResponsesResponse });
export type ResponsesFailedEvent = Static<typeof ResponsesFailedEvent>;

/** An output item opens (a message with no content yet, a call with `arguments: ""`). */
export const ResponsesOutputItemAddedEvent = event("response.output_item.added", {
  output_index: Type.Integer({ minimum: 0 }),
  item: ResponsesOutputItem,
});
export type ResponsesOutputItemAddedEvent = Static<typeof ResponsesOutputItemAddedEvent>;
/** An output item is whole: the same item the final response holds at `output_index`. */
export const ResponsesOutputItemDoneEvent = event("response.output_item.done", {
  output_index: Type.Integer({ minimum: 0 }),
  item: ResponsesOutputItem,
});
export type ResponsesOutputItemDoneEvent = Static<typeof ResponsesOutputItemDoneEvent>;

export const ResponsesContentPartAddedEvent = event("response.content_part.added", {
  ...inPart,
  part: ResponsesOutputText,
});
export type ResponsesContentPartAddedEvent = Static<typeof ResponsesContentPartAddedEvent>;
export const ResponsesContentPartDoneEvent = event("response.content_part.done", {
  ...inPart,
  part: ResponsesOutputText,
});
export type ResponsesContentPartDoneEvent = Static<typeof ResponsesContentPartDoneEvent>;

export const ResponsesOutputTextDeltaEvent = event("response.output_text.delta", {
  ...inPart,
  delta: Type.String(),
  logprobs: Type.Optional(Type.Array(Type.Unknown())),
});
export type ResponsesOutputTextDeltaEvent = Static<typeof ResponsesOutputTextDeltaEvent>;
export const ResponsesOutputTextDoneEvent = event("response.output_text.done", {
  ...inPart,
  text: Type.String(),
  logprobs: Type.Optional(Type.Array(Type.Unknown())),
});
export type ResponsesOutputTextDoneEvent = Static<typeof ResponsesOutputTextDoneEvent>;

export const ResponsesFunctionCallArgumentsDeltaEvent = event("response.function_call_arguments.delta", {
  ...inItem,
  delta: Type.String(),
});
export type ResponsesFunctionCallArgumentsDeltaEvent = Static<typeof ResponsesFunctionCallArgumentsDeltaEvent>;
export const ResponsesFunctionCallArgumentsDoneEvent = event("response.function_call_arguments.done", {
  ...inItem,
  arguments: Type.String(),
});
export type ResponsesFunctionCallArgumentsDoneEvent = Static<typeof ResponsesFunctionCallArgumentsDoneEvent>;

/** A custom (free-form) tool call's input text, as it is written, then whole. */
export const ResponsesCustomToolCallInputDeltaEvent = event("response.custom_tool_call_input.delta", {
  ...inItem,
  delta: Type.String(),
});
export type ResponsesCustomToolCallInputDeltaEvent = Static<typeof ResponsesCustomToolCallInputDeltaEvent>;
export const ResponsesCustomToolCallInputDoneEvent = event("response.custom_tool_call_input.done", {
  ...inItem,
  input: Type.String(),
});
export type ResponsesCustomToolCallInputDoneEvent = Static<typeof ResponsesCustomToolCallInputDoneEvent>;

export const ResponsesReasoningSummaryPartAddedEvent = event("response.reasoning_summary_part.added", {
  ...inSummary,
  part: ResponsesSummaryText,
});
export type ResponsesReasoningSummaryPartAddedEvent = Static<typeof ResponsesReasoningSummaryPartAddedEvent>;
export const ResponsesReasoningSummaryPartDoneEvent = event("response.reasoning_summary_part.done", {
  ...inSummary,
  part: ResponsesSummaryText,
});
export type ResponsesReasoningSummaryPartDoneEvent = Static<typeof ResponsesReasoningSummaryPartDoneEvent>;
export const ResponsesReasoningSummaryTextDeltaEvent = event("response.reasoning_summary_text.delta", {
  ...inSummary,
  delta: Type.String(),
});
export type ResponsesReasoningSummaryTextDeltaEvent = Static<typeof ResponsesReasoningSummaryTextDeltaEvent>;
export const ResponsesReasoningSummaryTextDoneEvent = event("response.reasoning_summary_text.done", {
  ...inSummary,
  text: Type.String(),
});
export type ResponsesReasoningSummaryTextDoneEvent = Static<typeof ResponsesReasoningSummaryTextDoneEvent>;

/** An error after the 200 (`code` is the error type it stands for); `response.failed` follows it. */
export const ResponsesErrorEvent = event("error", {
  code: Nullable(Type.String()),
  message: Type.String(),
  param: Type.Optional(Nullable(Type.String())),
});
export type ResponsesErrorEvent = Static<typeof ResponsesErrorEvent>;

/**
 * Any event of a Responses stream.
 *
 * @example
 * ```ts
 * function onEvent(e: ResponsesStreamEvent): void {
 *   if (e.type === "response.output_text.delta") process.stdout.write(e.delta);
 * }
 * ```
 */
export const ResponsesStreamEvent = Type.Union([
  ResponsesCreatedEvent,
  ResponsesInProgressEvent,
  ResponsesOutputItemAddedEvent,
  ResponsesContentPartAddedEvent,
  ResponsesOutputTextDeltaEvent,
  ResponsesOutputTextDoneEvent,
  ResponsesContentPartDoneEvent,
  ResponsesFunctionCallArgumentsDeltaEvent,
  ResponsesFunctionCallArgumentsDoneEvent,
  ResponsesCustomToolCallInputDeltaEvent,
  ResponsesCustomToolCallInputDoneEvent,
  ResponsesReasoningSummaryPartAddedEvent,
  ResponsesReasoningSummaryTextDeltaEvent,
  ResponsesReasoningSummaryTextDoneEvent,
  ResponsesReasoningSummaryPartDoneEvent,
  ResponsesOutputItemDoneEvent,
  ResponsesCompletedEvent,
  ResponsesIncompleteEvent,
  ResponsesFailedEvent,
  ResponsesErrorEvent,
]);
export type ResponsesStreamEvent = Static<typeof ResponsesStreamEvent>;

/** The event of one name. */
export type ResponsesStreamEventOf<T extends ResponsesStreamEventType> = Extract<ResponsesStreamEvent, { type: T }>;

// The union names exactly the events of RESPONSES_STREAM_EVENT_TYPES: a name added to one and
// not the other fails to compile here.
type SameNames = [ResponsesStreamEvent["type"]] extends [ResponsesStreamEventType]
  ? [ResponsesStreamEventType] extends [ResponsesStreamEvent["type"]]
    ? true
    : false
  : false;
const sameNames: SameNames = true;
void sameNames;
