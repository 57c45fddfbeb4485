/** A span as an OTLP/HTTP JSON export carries it (the fields these tests read). */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number; message?: string };
  attributes: Record<string, Value>;
  service: string;
}

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type Value = string | number | boolean | Value[];

function value(v: AnyValue): Value {
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(value);
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue ?? "";
}

const attrs = (list: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, value(a.value)]));

/**
 * An in-process OTLP/HTTP receiver: it takes `POST /v1/traces` in the JSON encoding and keeps
 * every span it was sent, decoded.
 */
export function startOtlpReceiver() {
  const spans: ExportedSpan[] = [];
  const contentTypes: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/traces")
        return new Response("not found", { status: 404 });
      contentTypes.push(req.headers.get("content-type") ?? "");
      const body = (await req.json()) as {
        resourceSpans: {
          resource: { attributes: { key: string; value: AnyValue }[] };
          scopeSpans: {
            spans: (Omit<ExportedSpan, "attributes" | "service"> & {
              attributes: { key: string; value: AnyValue }[];
            })[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(attrs(rs.resource.attributes)["service.name"]);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans) spans.push({ ...s, attributes: attrs(s.attributes), service });
      }
      return Response.json({});
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, spans, contentTypes, stop: () => server.stop(true) };
}
