/**
 * The agent session a request belongs to (docs/protocols.md, "Agent sessions"): the key of
 * session affinity (dispatch/affinity.ts) and a field of the request's log line. Coding agents
 * announce their session in a header of their own; other clients only through the body.
 */

/**
 * Session headers, first match wins: the messages-format agent's, opencode's, the Responses-format
 * agent's (`session_id`, with an underscore), and the generic names other clients use.
 */
export const SESSION_HEADERS = [
  "x-claude-code-session-id",
  "x-opencode-session",
  "session_id",
  "session-id",
  "x-session-id",
] as const;

/** Session ids are opaque; a longer one is cut (it keys a map and a Redis hash field). */
const MAX_LENGTH = 200;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The session in `metadata.user_id`: the messages-format agent writes `…_session_<id>` (older
 * releases) or a JSON object with a `session_id` (newer ones); any other user id stands for
 * itself (one user's requests then share a deployment, which is what caching wants too).
 */
function fromUserId(userId: string): string {
  const marker = userId.lastIndexOf("_session_");
  if (marker >= 0) return userId.slice(marker + "_session_".length);
  if (userId.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(userId);
      if (isObject(parsed) && typeof parsed.session_id === "string" && parsed.session_id !== "")
        return parsed.session_id;
    } catch {
      // not JSON after all: the id as it is
    }
  }
  return userId;
}

/**
 * The request's session id, or undefined when it names none: a session header, else the body's
 * `metadata.user_id` (messages format) or `prompt_cache_key` (chat and Responses formats).
 *
 * @example
 * ```ts
 * sessionOf(new Headers({ "x-claude-code-session-id": "9f1c…" }), {}); // "9f1c…"
 * sessionOf(new Headers(), { metadata: { user_id: "user_ab_account__session_42" } }); // "42"
 * ```
 */
export function sessionOf(headers: Headers, body: Readonly<Record<string, unknown>>): string | undefined {
  let id: string | undefined;
  for (const h of SESSION_HEADERS) {
    const v = headers.get(h);
    if (v) {
      id = v;
      break;
    }
  }
  if (id === undefined) {
    const userId = isObject(body.metadata) ? body.metadata.user_id : undefined;
    if (typeof userId === "string" && userId !== "") id = fromUserId(userId);
    else if (typeof body.prompt_cache_key === "string" && body.prompt_cache_key !== "") id = body.prompt_cache_key;
  }
  return id === undefined ? undefined : id.slice(0, MAX_LENGTH);
}
