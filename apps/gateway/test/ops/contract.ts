import Ajv2020 from "ajv/dist/2020";

type Json = Record<string, any>; // a parsed OpenAPI document: shape checked by the validator test

/**
 * Checks replies against the description document's own schemas: the reply schema of a path,
 * method, status (exact, else its class `4XX`) and media type, compiled with a JSON Schema
 * 2020-12 validator (OpenAPI 3.1's dialect) against the whole document, so `$ref`s resolve in it.
 */
export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

  constructor(readonly doc: Json) {
    this.ajv.addSchema(doc, "openapi");
  }

  /** The reply schema the document gives, or a thrown error naming what is missing. */
  replySchema(path: string, method: string, status: number, mediaType: string): Json {
    const op = this.doc.paths?.[path]?.[method];
    if (!op) throw new Error(`the document has no ${method.toUpperCase()} ${path}`);
    const reply = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`];
    if (!reply) throw new Error(`${method.toUpperCase()} ${path}: no reply described for status ${status}`);
    const schema = reply.content?.[mediaType]?.schema;
    if (!schema) throw new Error(`${method.toUpperCase()} ${path} ${status}: no ${mediaType} schema`);
    return schema;
  }

  /** Validation errors of `body` against the document's reply schema (empty: it conforms). */
  check(path: string, method: string, status: number, mediaType: string, body: unknown): string[] {
    const schema = this.replySchema(path, method, status, mediaType);
    const validate = this.ajv.compile(this.rebase(schema));
    if (validate(body)) return [];
    return (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || "(root)"} ${e.message} ${JSON.stringify(e.params)}`);
  }

  /** Validation errors of `body` against a named component schema. */
  checkComponent(name: string, body: unknown): string[] {
    const validate = this.ajv.compile({ $ref: `openapi#/components/schemas/${name}` });
    if (validate(body)) return [];
    return (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || "(root)"} ${e.message} ${JSON.stringify(e.params)}`);
  }

  /** A schema taken out of the document, its local `$ref`s pointed back into it. */
  private rebase(schema: unknown): Json {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'));
  }
}
