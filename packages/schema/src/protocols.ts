/**
 * The upstream wire protocols Turnpike speaks, by the names used across the repository: the
 * messages format (`POST /v1/messages`), chat completions (`POST /chat/completions`),
 * generateContent (`:generateContent`) and the Responses API (`POST /responses`). The one list
 * and the one type: the gateway's protocol adapters, the translators and the simulator all use
 * these names (docs/protocols.md §1–§3, §5.4).
 */
export const UPSTREAM_PROTOCOLS = ["messages", "chat", "generate", "responses"] as const;

export type Protocol = (typeof UPSTREAM_PROTOCOLS)[number];
