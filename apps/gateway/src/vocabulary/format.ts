/** The wire formats a client can speak. */
export type Format = "messages" | "chat" | "responses";

/** The ledger's endpoint: a client format's inference route, or the token count. */
export type Endpoint = Format | "count_tokens";
