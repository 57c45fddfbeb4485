import { SSEParser, type SSEMessage } from "@turnpike/schema/sse";

/** The `data:` payload of the frame whose `event:` line starts at `at`. */
export function dataAfter(region: string, at: number): string | undefined {
  const start = region.indexOf("\ndata: ", at);
  if (start === -1) return undefined;
  const end = region.indexOf("\n", start + 7);
  return region.slice(start + 7, end === -1 ? undefined : end);
}

/** Each occurrence of `marker` in `region`. */
export function each(region: string, marker: string, fn: (at: number) => void): void {
  for (let i = region.indexOf(marker); i !== -1; i = region.indexOf(marker, i + marker.length)) fn(i);
}

/** The events of a piece of raw SSE (parsed only when relayed text must be counted). */
export function parseRegion(region: string): SSEMessage[] {
  const parser = new SSEParser();
  return [...parser.push(region), ...parser.end()];
}
