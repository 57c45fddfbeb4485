import { existsSync, statSync } from "node:fs";
import { join, normalize, sep } from "node:path";
import type { Route } from "../http/route";
import { html } from "../openapi/operations";

/** Where the dashboard's build lands in the monorepo (`apps/dashboard`, `vite build`). */
export const DASHBOARD_DIST = join(import.meta.dir, "..", "..", "..", "dashboard", "dist");

// The page talks only to this origin; it is never framed (its buttons revoke keys).
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>Turnpike dashboard</title>
<p>The dashboard is not built yet. Run <code>bun run --cwd apps/dashboard build</code> (the start command does it when the build is missing), then reload.</p>`;

/** The file a request path names inside `root`, if it is one: `..`, absolute and malformed paths are not. */
function inside(root: string, requested: string): string | undefined {
  let name: string;
  try {
    name = decodeURIComponent(requested);
  } catch {
    return undefined;
  }
  const path = normalize(join(root, name));
  return path.startsWith(root) && existsSync(path) && statSync(path).isFile() ? path : undefined;
}

/**
 * `GET /dashboard` and its assets, read from the dashboard app's build folder. The app itself
 * holds no secret: it asks for the admin key and calls the admin API with it from the browser.
 * Asset names carry a content hash (the bundler's), so they are cached for good; the page is
 * revalidated so that a new build is picked up on reload.
 */
export function dashboardRoutes(dir: string = DASHBOARD_DIST): Route[] {
  const root = normalize(dir) + sep;
  const page = () => {
    const index = join(root, "index.html");
    if (!existsSync(index))
      return new Response(NOT_BUILT, {
        status: 503,
        headers: { ...PAGE_HEADERS, "content-type": "text/html; charset=utf-8" },
      });
    return new Response(Bun.file(index), {
      headers: { ...PAGE_HEADERS, "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" },
    });
  };
  return [
    {
      method: "GET",
      path: "/dashboard",
      doc: {
        tags: ["Operations"],
        summary: "The dashboard (signed in with the admin key in the browser)",
        security: [],
        responses: html("The page; 503 with a page saying how to build it when its build is missing."),
      },
      handle: page,
    },
    { method: "GET", path: "/dashboard/", handle: page },
    {
      method: "GET",
      path: "/dashboard/{path}",
      rest: true,
      doc: {
        tags: ["Operations"],
        summary: "The dashboard's assets",
        security: [],
        parameters: [
          {
            name: "path",
            in: "path",
            required: true,
            description: "A file of the dashboard's build (its assets).",
            schema: { type: "string" },
          },
        ],
        responses: { 200: { description: "The file." }, 404: { description: "No such file." } },
      },
      handle: ({ params }) => {
        const path = inside(root, params.path ?? "");
        if (path === undefined)
          return new Response("Not found", {
            status: 404,
            headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" },
          });
        const file = Bun.file(path);
        const immutable = path.startsWith(join(root, "assets") + sep);
        return new Response(file, {
          headers: {
            ...PAGE_HEADERS,
            "content-type": file.type,
            "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
          },
        });
      },
    },
  ];
}
