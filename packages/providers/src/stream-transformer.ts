/**
 * `Transformer.cancel` (Streams spec, 2023) runs when the reader cancels — a client that goes
 * away. Bun 1.4 calls it; TypeScript's DOM lib does not declare it yet, hence this type.
 */
export type CancellableTransformer<I, O> = Transformer<I, O> & { cancel?: (reason: unknown) => void };
