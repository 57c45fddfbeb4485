/** What a handler may ask of the server about its own connection. */
export interface Connection {
  requestIP(r: Request): { address: string } | null;
  /** Per-request idle timeout in seconds; 0 = never. */
  timeout(r: Request, seconds: number): void;
  /** Takes the connection over as a WebSocket (Bun's server; the Responses WebSocket transport). */
  upgrade?(r: Request, options: { data: unknown }): boolean;
}

/** One address range: an IPv4 (32-bit) or IPv6 (128-bit) prefix. */
interface Range {
  v6: boolean;
  base: bigint;
  bits: number;
}

/** The peers allowed to name the client in `X-Forwarded-For` (`TURNPIKE_TRUSTED_PROXIES`). */
export interface TrustedProxies {
  readonly ranges: readonly Range[];
}

/** An address as a number and its family; undefined if it is not an IP address. */
function parseIP(text: string): { v6: boolean; n: bigint } | undefined {
  let s = text.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  // An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d: it is the IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (mapped?.[1]) s = mapped[1];
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    if (parts.some((p) => p > 255)) return undefined;
    return { v6: false, n: parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n) };
  }
  if (!s.includes(":") || !/^[0-9a-f:]+$/i.test(s)) return undefined;
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (groups.some((g) => g.length === 0 || g.length > 4)) return undefined;
  return { v6: true, n: groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n) };
}

/**
 * `TURNPIKE_TRUSTED_PROXIES`: comma-separated addresses and CIDR ranges (`10.0.0.0/8`,
 * `::1`). A mistake is refused at start-up, naming the entry.
 */
export function parseTrustedProxies(value: string): TrustedProxies {
  const ranges: Range[] = [];
  for (const raw of value
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [addr = "", prefix] = raw.split("/");
    const ip = parseIP(addr);
    const max = ip?.v6 ? 128 : 32;
    const bits = prefix === undefined ? max : Number(prefix);
    if (!ip || !Number.isInteger(bits) || bits < 0 || bits > max) {
      throw new Error(
        `TURNPIKE_TRUSTED_PROXIES: ${JSON.stringify(raw)} is not an IP address or CIDR range (such as 10.0.0.0/8 or ::1)`,
      );
    }
    ranges.push({ v6: ip.v6, base: ip.n >> BigInt(max - bits), bits });
  }
  return { ranges };
}

function trusted(proxies: TrustedProxies, address: string): boolean {
  if (proxies.ranges.length === 0) return false;
  const ip = parseIP(address);
  if (!ip) return false;
  const max = ip.v6 ? 128 : 32;
  return proxies.ranges.some((r) => r.v6 === ip.v6 && ip.n >> BigInt(max - r.bits) === r.base);
}

/**
 * The client's address, for per-address limits ("local" when there is no socket). Only a peer
 * in `TURNPIKE_TRUSTED_PROXIES` may name it: then the right-most `X-Forwarded-For` entry that is
 * not itself a trusted proxy is the client (entries to its left were written by the client and
 * prove nothing). From any other peer the header is ignored, so it cannot be used to dodge a limit
 * or to lock someone else out.
 */
export function clientAddress(
  server: Pick<Connection, "requestIP"> | null | undefined,
  request: Request,
  proxies: TrustedProxies = { ranges: [] },
): string {
  const peer = server?.requestIP(request)?.address ?? "local";
  if (!trusted(proxies, peer)) return peer;
  const forwarded = request.headers.get("x-forwarded-for");
  if (!forwarded) return peer;
  const hops = forwarded
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!; // i is within the list
    if (!trusted(proxies, hop)) return parseIP(hop) ? hop : peer;
  }
  return hops[0] ?? peer;
}
