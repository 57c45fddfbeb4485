/**
 * The replies of the Responses format's other routes (docs/protocols.md §5): a stored response
 * deleted, the input items of a stored response, and the input token count.
 */
import { Type, type Static } from "@sinclair/typebox";
import { Nullable } from "./nullable.js";
import { ResponsesInputItem } from "./responses-request.js";

/** The reply of `DELETE /v1/responses/{id}`. */
export const ResponsesDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal("response"),
  deleted: Type.Literal(true),
});
export type ResponsesDeleted = Static<typeof ResponsesDeleted>;

/** An input item as `GET /v1/responses/{id}/input_items` lists it: with an id (`item_0000` where it had none). */
export const ResponsesListedInputItem = Type.Intersect([ResponsesInputItem, Type.Object({ id: Type.String() })]);
export type ResponsesListedInputItem = Static<typeof ResponsesListedInputItem>;

/** The reply of `GET /v1/responses/{id}/input_items` (newest first unless `order=asc`). */
export const ResponsesInputItemList = Type.Object({
  object: Type.Literal("list"),
  data: Type.Array(ResponsesListedInputItem),
  first_id: Nullable(Type.String()),
  last_id: Nullable(Type.String()),
  has_more: Type.Boolean(),
});
export type ResponsesInputItemList = Static<typeof ResponsesInputItemList>;

/** The reply of `POST /v1/responses/input_tokens`. */
export const ResponsesInputTokens = Type.Object({
  object: Type.Literal("response.input_tokens"),
  input_tokens: Type.Integer({ minimum: 0 }),
});
export type ResponsesInputTokens = Static<typeof ResponsesInputTokens>;
