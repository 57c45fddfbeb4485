/**
 * `@turnpike/schema`: TypeBox schemas and static types of the messages and chat completions
 * wire formats, compiled request validators, and the SSE decoder/encoder.
 *
 * @example
 * ```ts
 * import { validateChatRequest, type ChatRequest } from "@turnpike/schema";
 * const r = validateChatRequest(await request.json());
 * if (!r.ok) return new Response(r.issues.map((i) => i.message).join("; "), { status: 400 });
 * const body: ChatRequest = r.value;
 * ```
 */
export * from "./cache-control.js";
export * from "./nullable.js";
export * from "./open.js";
export * from "./content-block-param.js";
export * from "./content-block.js";
export * from "./turnpike-extension.js";
export * from "./messages-request.js";
export * from "./messages-response.js";
export * from "./messages-stream.js";
export * from "./count-tokens.js";
export * from "./errors.js";
export * from "./error-types.js";
export * from "./chat-params.js";
export * from "./chat-message.js";
export * from "./chat-request.js";
export * from "./chat-response.js";
export * from "./chat-stream.js";
export * from "./models.js";
export * from "./embeddings.js";
export * from "./batches.js";
export * from "./catalog-ids.js";
export * from "./protocols.js";
export * from "./responses-request.js";
export * from "./responses-response.js";
export * from "./responses-stream.js";
export * from "./responses-stored.js";
export * from "./generate-request.js";
export * from "./validate.js";
export * from "./sse.js";
export * from "./is-record.js";
