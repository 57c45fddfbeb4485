/** `client.files`: the JSONL files of batches (their input, and the output and error files they write). */
import type { FileObject } from "@turnpike/schema";
import type { APIClient, APIPromise, RequestOptions } from "@turnpike/sdk-core";

/** What `files.create` uploads: the file, and its purpose (`batch`, the only one Turnpike keeps). */
export interface FileCreateParams {
  /** The JSONL: a `Blob`/`File`, or its text (named `batch.jsonl`). */
  file: Blob | string;
  purpose: "batch";
}

/**
 * `client.files`.
 *
 * @example
 * ```ts
 * const file = await client.files.create({ file: lines.map((l) => JSON.stringify(l)).join("\n"), purpose: "batch" });
 * const text = await client.files.content(file.id);
 * ```
 */
export class Files {
  readonly #client: APIClient;

  constructor(client: APIClient) {
    this.#client = client;
  }

  /** Uploads a batch's input file (multipart/form-data). */
  create(body: FileCreateParams, options?: RequestOptions): APIPromise<FileObject> {
    const form = new FormData();
    form.append("purpose", body.purpose);
    if (typeof body.file === "string")
      form.append("file", new Blob([body.file], { type: "application/jsonl" }), "batch.jsonl");
    else if (typeof File !== "undefined" && body.file instanceof File) form.append("file", body.file, body.file.name);
    else form.append("file", body.file, "batch.jsonl");
    return this.#client.request<FileObject>({ ...options, method: "POST", path: "/files", body: form });
  }

  /** A file's description. */
  retrieve(fileId: string, options?: RequestOptions): APIPromise<FileObject> {
    return this.#client.request<FileObject>({
      ...options,
      method: "GET",
      path: `/files/${encodeURIComponent(fileId)}`,
    });
  }

  /** A file's content, as text (JSONL: one request or result a line). */
  content(fileId: string, options?: RequestOptions): APIPromise<string> {
    return this.#client.request<string>({
      ...options,
      method: "GET",
      path: `/files/${encodeURIComponent(fileId)}/content`,
      replyAs: "text",
    });
  }
}
