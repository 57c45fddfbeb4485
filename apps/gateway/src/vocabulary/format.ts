/** The wire formats a client can speak. */
export type Format = "messages" | "chat" | "responses" | "generate";

/** The ledger's endpoint: a client format's inference route, the token count, an MCP tool call, or embeddings. */
export type Endpoint = Format | "count_tokens" | "mcp" | "embeddings";
