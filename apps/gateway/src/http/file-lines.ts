/** A line of a file: its text, or only its size when it is longer than the limit (not kept). */
type FileLine = { text: string; size: number } | { text: undefined; size: number };

const NEWLINE = 0x0a;
const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * The lines of a file given in chunks of bytes, in order: a line may run across any number of
 * chunks (its pieces are joined when its end comes), and a chunk may end inside a character (a
 * newline byte is never part of one, so a line is decoded whole). The trailing `\r` of a CRLF
 * line and a byte order mark at the file's start are dropped; invalid UTF-8 becomes U+FFFD. A
 * line over `maxBytes` is not kept, only measured.
 */
export async function* fileLines(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<FileLine> {
  let carry: Uint8Array[] = [];
  let carried = 0;
  /** The last byte carried (a `\r` there may end a CRLF line whose bytes were not kept). */
  let tail = -1;
  let first = true;
  const line = (last: Uint8Array): FileLine => {
    let size = carried + last.byteLength;
    const lastByte = last.byteLength > 0 ? last[last.byteLength - 1] : carried > 0 ? tail : -1;
    const parts = carry;
    carry = [];
    carried = 0;
    const cr = lastByte === 0x0d ? 1 : 0;
    size -= cr;
    if (size > maxBytes) {
      first = false;
      return { text: undefined, size };
    }
    const whole = parts.length === 0 ? last : Buffer.concat([...parts, last]);
    let text = utf8.decode(whole.subarray(0, whole.byteLength - cr));
    if (first && text.startsWith("\uFEFF")) text = text.slice(1);
    first = false;
    return { text, size };
  };
  for await (const chunk of chunks) {
    let at = 0;
    for (;;) {
      const end = chunk.indexOf(NEWLINE, at);
      if (end < 0) break;
      yield line(chunk.subarray(at, end));
      at = end + 1;
    }
    if (at < chunk.byteLength) {
      const rest = chunk.subarray(at);
      carried += rest.byteLength;
      tail = rest[rest.byteLength - 1]!; // rest is not empty
      // A line already over the limit is only counted on: its bytes are not kept.
      if (carried <= maxBytes + 1) carry.push(rest);
      else carry = [];
    }
  }
  if (carried > 0) yield line(new Uint8Array(0));
}

/** A stream's reads, in order (a request's or a reply's body). */
export async function* readsOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
