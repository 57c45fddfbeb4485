import { Type, type TNull, type TSchema, type TUnion } from "@sinclair/typebox";

/**
 * `T | null`. Both formats use explicit nulls for "not set" (`stop_sequence: null`,
 * `usage: null` on chat chunks), and chat clients send `"temperature": null` for unset
 * parameters, so nullable fields are common.
 *
 * @example
 * ```ts
 * const StopSequence = Nullable(Type.String()); // string | null
 * ```
 */
export const Nullable = <T extends TSchema>(schema: T, options: { expected?: string } = {}): TUnion<[T, TNull]> =>
  Type.Union([schema, Type.Null()], options);
