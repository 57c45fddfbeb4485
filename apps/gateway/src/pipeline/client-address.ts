/** What a handler may ask of the server about its own connection. */
export interface Connection {
  requestIP(r: Request): { address: string } | null;
  /** Per-request idle timeout in seconds; 0 = never. */
  timeout(r: Request, seconds: number): void;
}

/** The peer address of a request, for per-address limits ("local" when there is no socket). */
export function clientAddress(server: Pick<Connection, "requestIP"> | null | undefined, request: Request): string {
  return server?.requestIP(request)?.address ?? "local";
}
