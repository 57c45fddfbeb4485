/** Images and documents: data URLs and the media types each format accepts. */
import { invalidRequest } from "./errors.js";

/** The four image types the messages format accepts (docs/protocols.md §1.3). */
export const IMAGE_MEDIA_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const;
export type ImageMediaTypeName = (typeof IMAGE_MEDIA_TYPES)[number];

export interface DataUrl {
  mediaType: string;
  data: string;
}

/** `data:<mime>[;param…];base64,<data>` → parts; `undefined` for anything else. */
export function parseDataUrl(url: string): DataUrl | undefined {
  const m = /^data:([^;,]*)((?:;[^;,]*)*?);base64,/i.exec(url);
  if (!m) return undefined;
  return { mediaType: (m[1] ?? "").trim().toLowerCase(), data: url.slice(m[0].length) };
}

export function toDataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

/**
 * Checks an image media type against the four the messages format accepts; `image/jpg` (a
 * common misspelling) counts as `image/jpeg`. Anything else is a 400 that names the type.
 */
export function checkImageMediaType(mediaType: string, param: string): ImageMediaTypeName {
  const t = mediaType === "image/jpg" ? "image/jpeg" : mediaType;
  const known = IMAGE_MEDIA_TYPES.find((m) => m === t);
  if (known) return known;
  throw invalidRequest(
    param,
    `image media type "${mediaType || "(none)"}" is not supported; expected one of ${IMAGE_MEDIA_TYPES.join(", ")}`,
  );
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
