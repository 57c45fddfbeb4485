import Busboy, { type BusboyFileStream, type BusboyInstance } from "@fastify/busboy";
import { GatewayError } from "@turnpike/providers";
import type { Readable } from "node:stream";
import { bodyTooLarge } from "../request/read-body";
import { invalid } from "../vocabulary/client-errors";
import { readsOf } from "../http/file-lines";

/**
 * A `multipart/form-data` upload read as it arrives: the `file` part's bytes in pieces of `pieceBytes`
 * (what the store writes a statement each), the other fields once the body has ended. Nothing holds
 * the whole body at once and no single read of it holds the event loop: the runtime's own `formData()`
 * reads a 100 MB body in one piece (37–98 ms of the loop on a loaded 2-core machine, site/guide/keys-limits-metering.md "One
 * request's hold on the process"). The parsing is @fastify/busboy's (decisions/0017).
 */
export interface Upload {
  /** The `file` part's name as the client gave it; undefined if the body has no `file` part. */
  filename: string | undefined;
  /** The `file` part's bytes, in pieces of at most `pieceBytes` (empty when there is no file). */
  pieces: AsyncIterable<Uint8Array>;
  /** Every other field, once the whole body has been read (read `pieces` first). */
  fields(): Promise<Map<string, string>>;
}

const malformed = () => invalid("The body must be multipart/form-data with `file` and `purpose`.", "file");

/**
 * Starts reading `request`'s multipart body; resolves once its `file` part begins (or the body ends
 * without one). A body over `maxBytes`, cut short or not multipart is refused in the caller's
 * envelope (413 or 400), through whichever of `pieces` and `fields()` is being read.
 */
export async function readUpload(request: Request, maxBytes: number, pieceBytes: number): Promise<Upload> {
  const contentType = request.headers.get("content-type") ?? "";
  let parser: BusboyInstance;
  try {
    parser = new Busboy({
      headers: { "content-type": contentType },
      limits: { fileSize: maxBytes, files: 4, fields: 16, fieldSize: 64 * 1024, parts: 20 },
    });
  } catch {
    throw malformed();
  }
  const fields = new Map<string, string>();
  const { promise: failed, reject: fail } = Promise.withResolvers<never>();
  failed.catch(() => {}); // read by whichever of the two ways is waiting
  let fileStream: Readable | undefined;
  const ended = new Promise<void>((resolve) => parser.on("finish", () => resolve()));
  const started = new Promise<string | undefined>((resolve) => {
    parser.on("file", (name: string, stream: BusboyFileStream, filename: string) => {
      if (name !== "file" || fileStream) {
        stream.resume(); // another file part: read past it
        return;
      }
      fileStream = stream;
      stream.on("limit", () => stream.destroy(bodyTooLarge(maxBytes)));
      resolve(filename || "input.jsonl");
    });
    parser.on("field", (name: string, value: string) => {
      if (!fields.has(name)) fields.set(name, value);
    });
    ended.then(() => resolve(undefined));
  });
  const stop = (e: unknown) => {
    fileStream?.destroy(e as Error);
    parser.destroy();
    fail(e);
  };
  parser.on("error", () => stop(malformed()));

  // The body fed to the parser as it comes, each write waited for (the parser holds back while the
  // file's reader is behind).
  const feed = (async () => {
    if (!request.body) throw malformed();
    let seen = 0;
    for await (const chunk of readsOf(request.body)) {
      seen += chunk.byteLength;
      if (seen > maxBytes + 64 * 1024) throw bodyTooLarge(maxBytes);
      await new Promise<void>((resolve, reject) =>
        parser.write(chunk, (e?: Error | null) => (e ? reject(e) : resolve())),
      );
    }
    parser.end();
  })();
  feed.catch((e) => stop(e instanceof GatewayError ? e : malformed()));

  const filename = await Promise.race([started, failed]);
  const stream = fileStream;
  return {
    filename,
    pieces: (async function* () {
      if (!stream) return;
      let piece = new Uint8Array(pieceBytes);
      let at = 0;
      try {
        for await (const data of stream as AsyncIterable<Uint8Array>) {
          let from = 0;
          while (from < data.byteLength) {
            const n = Math.min(pieceBytes - at, data.byteLength - from);
            piece.set(data.subarray(from, from + n), at);
            at += n;
            from += n;
            if (at === pieceBytes) {
              yield piece;
              piece = new Uint8Array(pieceBytes);
              at = 0;
            }
          }
        }
      } catch (e) {
        throw e instanceof GatewayError ? e : malformed(); // a part cut short: the parser's own error
      }
      if (at > 0) yield piece.subarray(0, at);
    })(),
    fields: async () => {
      await Promise.race([ended, failed]);
      return fields;
    },
  };
}
