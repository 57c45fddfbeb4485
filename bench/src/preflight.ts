/**
 * One request of each shape before any load: a gateway that answers an error fast would
 * otherwise look very quick. Checks status, content type and the reply's format.
 */
import type { HttpRequestSpec } from "./scenarios";

export type ReplyFormat = "messages" | "chat" | "generate" | "responses";

const MARK: Record<ReplyFormat, { json: RegExp; stream: RegExp }> = {
  messages: { json: /"type"\s*:\s*"message"/, stream: /^event: message_start$/m },
  chat: { json: /"object"\s*:\s*"chat\.completion"/, stream: /"object"\s*:\s*"chat\.completion\.chunk"/ },
  generate: { json: /"candidates"/, stream: /"candidates"/ },
  responses: { json: /"object"\s*:\s*"response"/, stream: /^event: response\.created$/m },
};

/** Sends the request once; returns a problem description, or undefined when the reply is right. */
export async function preflight(url: string, req: HttpRequestSpec, expect: ReplyFormat): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(url + req.path, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    return `${req.path}: ${e instanceof Error ? e.message : String(e)}`;
  }
  const text = await res.text();
  const head = text.slice(0, 400);
  if (res.status !== 200) return `${req.path} answered ${res.status}: ${head}`;
  const ct = res.headers.get("content-type") ?? "";
  if (req.stream !== ct.startsWith("text/event-stream"))
    return `${req.path}: content-type ${ct} for a ${req.stream ? "stream" : "JSON"} request`;
  const mark = req.stream ? MARK[expect].stream : MARK[expect].json;
  if (!mark.test(text)) return `${req.path}: the reply is not in the ${expect} format: ${head}`;
  return undefined;
}
