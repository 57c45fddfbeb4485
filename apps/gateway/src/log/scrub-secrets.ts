import { KEY_PREFIX } from "../vocabulary/key-prefix";

/** Secrets shorter than this are not searched for: a short value would blank out ordinary words. */
const MIN_SECRET_LENGTH = 8;

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A function that blanks every secret out of a finished log line: the configured secrets
 * (admin key, vendor keys, metrics key) by value, any Turnpike key by its shape (the gateway never
 * holds its keys' secrets, only their hashes), and whatever follows `Bearer ` or an API-key
 * header name. It runs on the serialised line, so no field, message or error text escapes it.
 */
export function secretScrubber(secrets: readonly (string | undefined)[]): (line: string) => string {
  const known = [...new Set(secrets.filter((s): s is string => typeof s === "string" && s.length >= MIN_SECRET_LENGTH))]
    // Longest first: a secret that contains another is blanked whole.
    .sort((a, b) => b.length - a.length)
    .map(literal);
  const patterns = [
    ...known,
    // A Turnpike key: the prefix, then its random part (base64url).
    `${literal(KEY_PREFIX)}[A-Za-z0-9_-]{8,}`,
    // Credentials as they travel in headers, whatever their shape.
    "(?<=[Bb]earer\\s+)[^\\s\"'\\\\,]+",
    // (quotes possibly escaped: the line may hold JSON inside a JSON string)
    "(?<=(?:x-api-key|x-goog-api-key|api[-_]key)\\\\?[\"']?\\s*[:=]\\s*\\\\?[\"']?)[^\\s\"'\\\\,]+",
  ];
  const re = new RegExp(patterns.join("|"), "gi");
  // The lookbehinds make the full expression slow to run over a line (some microseconds); a
  // plain alternation of what every match starts with or follows rules out nearly every line
  // first, in a fraction of that.
  const candidate = new RegExp([...known, literal(KEY_PREFIX), "bearer", "api[-_]key"].join("|"), "i");
  return (line) => (candidate.test(line) ? line.replace(re, "[redacted]") : line);
}
