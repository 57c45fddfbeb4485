/**
 * Citations (docs/protocols.md §1.3): a document block may ask for them (`citations.enabled`),
 * and text blocks of earlier replies may carry them. Only a messages-format upstream produces or
 * reads them; toward any other upstream the content goes without them, and a warning says so.
 */
import type { ContentBlockParam } from "@turnpike/schema";
import type { Warnings } from "./warnings.js";

/** Warns once if `b` asks for or carries citations that `upstream` cannot handle. */
export function warnCitations(b: ContentBlockParam, at: string, upstream: string, w: Warnings): void {
  if (b.type === "document" && b.citations?.enabled) {
    w.add("citations", `${upstream} upstreams do not cite documents; ${at} was sent without citations`);
  } else if (b.type === "text" && b.citations?.length) {
    w.add("citations", `${upstream} upstreams do not read citations; those of earlier turns were not sent`);
  }
}
