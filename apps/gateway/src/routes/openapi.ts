import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { GatewayDeps } from "../wiring/deps";
import type { Route } from "../http/route";
import { openApiDocument } from "../openapi/document";
import { html } from "../openapi/operations";

/** The page's bytes, read once: it is a file of the gateway, not built per request. */
const PAGE = readFileSync(new URL("../openapi/docs-page.html", import.meta.url), "utf8");

/**
 * The API reference renderer's self-contained browser bundle (Scalar's standalone build), found
 * in the installed package: its entry is `dist/index.js`, the bundle `dist/browser/standalone.js`.
 * Null when the package is not installed (the page then says so instead of rendering).
 */
function rendererBundle(): string | null {
  try {
    const bundle = join(dirname(Bun.resolveSync("@scalar/api-reference", import.meta.dir)), "browser", "standalone.js");
    return existsSync(bundle) ? bundle : null;
  } catch {
    return null;
  }
}

/**
 * `GET /openapi.json`, built from the route table on first request (the catalog is fixed for the
 * process), then served as bytes; and `GET /docs`, the same rendered as an API reference by a
 * renderer the gateway serves itself (`GET /docs/api-reference.js`). `table` is every route of
 * the gateway, these included.
 */
export function openapiRoutes(deps: GatewayDeps, table: () => readonly Route[]): Route[] {
  let body: string | undefined;
  const bundle = rendererBundle();
  return [
    {
      method: "GET",
      path: "/openapi.json",
      doc: {
        tags: ["Operations"],
        summary: "This document",
        description:
          "The OpenAPI 3.1 description of this gateway, generated from its route table; `model` values are this gateway's catalog.",
        security: [],
        responses: {
          200: { description: "OpenAPI 3.1.", content: { "application/json": { schema: { type: "object" } } } },
        },
      },
      handle: () => {
        body ??= JSON.stringify(
          openApiDocument(
            table(),
            deps.catalog.all().map((e) => e.id),
          ),
        );
        return new Response(body, { headers: { "content-type": "application/json" } });
      },
    },
    {
      method: "GET",
      path: "/docs",
      doc: {
        tags: ["Operations"],
        summary: "This document as a page",
        description:
          "An API reference page rendering `/openapi.json`, served whole by the gateway (it loads nothing from elsewhere).",
        security: [],
        responses: html("HTML."),
      },
      handle: () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }),
    },
    {
      method: "GET",
      path: "/docs/api-reference.js",
      doc: {
        tags: ["Operations"],
        summary: "The reference page's renderer",
        description: "The API reference renderer's browser bundle, from the gateway's installed packages.",
        security: [],
        responses: {
          200: { description: "JavaScript.", content: { "text/javascript": { schema: { type: "string" } } } },
          503: {
            description: "The renderer is not installed with this gateway.",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
      handle: () =>
        bundle
          ? new Response(Bun.file(bundle), {
              headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" },
            })
          : new Response(
              "The API reference renderer (@scalar/api-reference) is not installed; /openapi.json has the document.",
              { status: 503, headers: { "content-type": "text/plain; charset=utf-8" } },
            ),
    },
  ];
}
