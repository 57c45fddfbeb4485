import { invalid } from "../vocabulary/client-errors";

/**
 * A list's page cursor (`next_cursor`, sent back as `cursor`): the last row's time and id, as a
 * base64url JSON pair. Opaque to the client; checked when it comes back, so a cursor this API did
 * not give out is a 400 naming `cursor`, never a query.
 */
export function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString("base64url");
}

/** The time and id of a cursor `encodeCursor` made, when `ok` takes them; else the 400. */
export function decodeCursor(cursor: string, ok: (at: string, id: string) => boolean): { at: string; id: string } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && typeof v[1] === "string" && ok(v[0], v[1]))
      return { at: v[0], id: v[1] };
  } catch {
    // refused below
  }
  throw invalid("cursor: not a cursor this API gave out (use next_cursor of the previous page as it came)", "cursor");
}
