import { Elysia } from "elysia";
import { readFileSync } from "node:fs";

/** The page's bytes, read once: it is a file of the gateway, not built per request. */
const PAGE = readFileSync(new URL("./docs-page.html", import.meta.url), "utf8");

/** `GET /docs`: the description document as a readable page (a self-contained page that renders `/openapi.json`). */
export const docsModule = () =>
  new Elysia({ name: "module.docs" }).get("/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }));
