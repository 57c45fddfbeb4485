import type { Protocol } from "./simulator-options";
import { generateInvalidKey, vendorError, type ErrorReply } from "./vendor-errors";

/** The one key the simulator treats as wrong, so tests can reach each vendor's bad-key reply. */
export const INVALID_KEY = "sim-invalid-key";

const MISSING_MESSAGES = "x-api-key header is required";
const MISSING_CHAT =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.";
const MISSING_GENERATE =
  "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.";

function bearer(headers: Headers): string {
  const h = headers.get("authorization") ?? "";
  return h.toLowerCase().startsWith("bearer ") ? h.slice(7).trim() : "";
}

/**
 * Each vendor's own key check (docs/protocols.md §1.1, §2.1, §3.1): messages takes `x-api-key` or a
 * Bearer token, chat a Bearer token, generateContent `x-goog-api-key` or `?key=`. Any non-empty key
 * passes except {@link INVALID_KEY}. Returns the vendor's error reply, or undefined.
 */
export function checkAuth(
  protocol: Protocol,
  headers: Headers,
  query: string,
  requestId: string,
): ErrorReply | undefined {
  const ctx = { requestId };
  switch (protocol) {
    case "messages": {
      const key = headers.get("x-api-key") || bearer(headers);
      if (!key) return vendorError("messages", 401, { ...ctx, message: MISSING_MESSAGES });
      return key === INVALID_KEY ? vendorError("messages", 401, ctx) : undefined;
    }
    case "chat":
    case "responses": {
      const key = bearer(headers);
      if (!key) return vendorError("chat", 401, { message: MISSING_CHAT, code: null });
      return key === INVALID_KEY ? vendorError("chat", 401) : undefined;
    }
    case "generate": {
      const key = headers.get("x-goog-api-key") || new URLSearchParams(query).get("key");
      if (!key) return vendorError("generate", 401, { message: MISSING_GENERATE });
      // An unknown key is a 400 INVALID_ARGUMENT with reason API_KEY_INVALID, not a 401 (§3.8).
      return key === INVALID_KEY ? generateInvalidKey() : undefined;
    }
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}
