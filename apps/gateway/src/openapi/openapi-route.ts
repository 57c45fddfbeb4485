import { readFileSync } from "node:fs";
import type { GatewayDeps } from "../deps";
import type { Route } from "../http/route";
import { openApiDocument } from "./document";
import { ok } from "./operations";

/** The page's bytes, read once: it is a file of the gateway, not built per request. */
const PAGE = readFileSync(new URL("./docs-page.html", import.meta.url), "utf8");

/**
 * `GET /openapi.json`, built from the route table on first request (the catalog is fixed for the
 * process), then served as bytes; and `GET /docs`, the same as a readable page (a self-contained
 * page that renders `/openapi.json`). `table` is every route of the gateway, these two included.
 */
export function openapiRoutes(deps: GatewayDeps, table: () => readonly Route[]): Route[] {
  let body: string | undefined;
  return [
    {
      method: "GET",
      path: "/openapi.json",
      doc: { tags: ["Operations"], summary: "This document", security: [], responses: ok("OpenAPI 3.1.", { type: "object" }) },
      handle: () => {
        body ??= JSON.stringify(openApiDocument(table(), deps.catalog.all().map((e) => e.id)));
        return new Response(body, { headers: { "content-type": "application/json" } });
      },
    },
    {
      method: "GET",
      path: "/docs",
      doc: { tags: ["Operations"], summary: "This document as a page", security: [], responses: { 200: { description: "HTML.", content: { "text/html": { schema: { type: "string" } } } } } },
      handle: () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }),
    },
  ];
}
