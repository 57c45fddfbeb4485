import { Elysia } from "elysia";
import type { GatewayDeps } from "../deps";
import { openApiDocument } from "./document";

/** `GET /openapi.json`: built on first request (the catalog is fixed for the process), then served as bytes. */
export const openapiModule = (deps: GatewayDeps) => {
  let body: string | undefined;
  return new Elysia({ name: "module.openapi" }).get("/openapi.json", () => {
    body ??= JSON.stringify(openApiDocument(deps.catalog.all().map((e) => e.id)));
    return new Response(body, { headers: { "content-type": "application/json" } });
  });
};
