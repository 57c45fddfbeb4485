/**
 * A vector as the chat family's `encoding_format: "base64"` sends it: its values as
 * little-endian float32, base64-encoded (what the official client libraries decode).
 */
export function base64Vector(values: readonly number[]): string {
  const bytes = new Float32Array(values);
  // Float32Array is in the machine's byte order; the wire's is little-endian.
  const view = new DataView(bytes.buffer);
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1)
    for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
  return Buffer.from(bytes.buffer).toString("base64");
}

/** The inverse of {@link base64Vector}. */
export function vectorOfBase64(text: string): number[] {
  const buf = Buffer.from(text, "base64");
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out: number[] = [];
  for (let i = 0; i + 4 <= buf.byteLength; i += 4) out.push(view.getFloat32(i, true));
  return out;
}
