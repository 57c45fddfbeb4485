/**
 * The public types of `client.responses`. Wire types come from `@turnpike/schema`, so the client,
 * the gateway and the mocks share one definition; the names the official client of the format
 * uses (`ResponseCreateParams`, `ResponseStreamEvent`, …) are aliases of them.
 */
import type {
  ResponsesInputItemList,
  ResponsesListedInputItem,
  ResponsesRequest,
  ResponsesResponse,
  ResponsesStreamEvent,
} from "@turnpike/schema";

export type {
  ResponsesDeleted,
  ResponsesFunctionTool,
  ResponsesInputItem,
  ResponsesInputItemList,
  ResponsesInputPart,
  ResponsesInputTokens,
  ResponsesListedInputItem,
  ResponsesOutputItem,
  ResponsesRequest,
  ResponsesResponse,
  ResponsesStreamEvent,
  ResponsesStreamEventOf,
  ResponsesStreamEventType,
  ResponsesUsage,
} from "@turnpike/schema";

/**
 * A response as `responses.create`, `responses.retrieve` and `finalResponse()` return it: the
 * wire object plus `output_text`, the text of every `output_text` part of its message items,
 * joined in order (computed by the client, as the official client does; `""` when the model only
 * called functions).
 *
 * @example
 * ```ts
 * const response: ResponseObject = await client.responses.create({ model: "beta-5", input: "Hi" });
 * console.log(response.output_text, response.usage?.total_tokens);
 * ```
 */
export type ResponseObject = ResponsesResponse & { output_text: string };

/** One event of a Responses stream (the official client's name for {@link ResponsesStreamEvent}). */
export type ResponseStreamEvent = ResponsesStreamEvent;
/** An input item as the input-items list shows it (the official client's name: `ResponseItem`). */
export type ResponseItem = ResponsesListedInputItem;
/** A page of input items (the official client's name: `ResponseItemList`). */
export type ResponseItemList = ResponsesInputItemList;

/**
 * The body of `responses.create`.
 *
 * @example
 * ```ts
 * const params: ResponseCreateParams = { model: "beta-5", instructions: "Be brief.", input: "Hello" };
 * ```
 */
export type ResponseCreateParamsBase = Omit<ResponsesRequest, "stream"> & { stream?: boolean | null };
/** {@link ResponseCreateParamsBase} with `stream` absent, `false` or `null`: resolves to a {@link ResponseObject}. */
export type ResponseCreateParamsNonStreaming = ResponseCreateParamsBase & { stream?: false | null };
/** {@link ResponseCreateParamsBase} with `stream: true`: resolves to a `Stream` of events. */
export type ResponseCreateParamsStreaming = ResponseCreateParamsBase & { stream: true };
/** Either form of the `responses.create` body. */
export type ResponseCreateParams = ResponseCreateParamsNonStreaming | ResponseCreateParamsStreaming;
/** The body of `responses.stream`: `stream` is implied. */
export type ResponseStreamParams = Omit<ResponseCreateParamsBase, "stream">;
/** The body of `responses.inputTokens.count`: the request whose input would be counted. */
export type ResponseInputTokensParams = Omit<ResponseCreateParamsBase, "stream">;

/** Query of `responses.inputItems.list`. */
export interface InputItemListParams {
  /** `"desc"` (newest first, the default) or `"asc"`. */
  order?: "asc" | "desc";
  /** Items after this item id (the next page). */
  after?: string;
  /** At most this many items. */
  limit?: number;
}
