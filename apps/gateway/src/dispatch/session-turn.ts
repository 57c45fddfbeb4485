import type { Warning } from "@turnpike/providers";
import type { ClientRequest } from "../formats";
import type { SessionPlace } from "./affinity";

/** A short, stable name for a thinking proof (a signature can be kilobytes; the map keeps only this). */
export function fingerprint(proof: string): string {
  return Bun.hash(proof).toString(36);
}

/** A session's request made ready for one deployment. */
export interface SessionTurn {
  /** The request to send there: without thinking another deployment wrote. */
  client: ClientRequest;
  /** The session's proof origins, with those it carried when it moved added. */
  origins: Record<string, string>;
  warnings: Warning[];
  /** The deployment the session leaves (its prompt cache stays behind), when it moves. */
  movedFrom: string | undefined;
}

/** A request with no session place (most): shared, never written (a move copies the origins first). */
const NO_ORIGINS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NO_WARNINGS: Warning[] = Object.freeze([]) as unknown as Warning[];

/**
 * A request of a session that is on `place`, for deployment `to`. When the session moves, every
 * thinking proof its history carries was written where it was, and is recorded so; a proof whose
 * recorded origin is another deployment is not sent (a vendor checks its signatures, and refuses
 * a foreign one — docs/protocols.md, "Agent sessions"), with a warning naming how many went.
 */
export function sessionTurn(client: ClientRequest, place: SessionPlace | undefined, to: string): SessionTurn {
  if (!place) return { client, origins: NO_ORIGINS, warnings: NO_WARNINGS, movedFrom: undefined };
  const movedFrom = place.deployment === to ? undefined : place.deployment;
  let origins = place.origins;
  if (movedFrom !== undefined && client.thinkingProofs) {
    origins = { ...origins };
    for (const proof of client.thinkingProofs()) origins[fingerprint(proof)] ??= movedFrom;
  }
  const warnings: Warning[] = [];
  if (movedFrom !== undefined)
    warnings.push({
      param: "session",
      message: `moved from deployment ${movedFrom} to ${to}; its prompt cache starts over`,
    });
  const foreign = (proof: string) => {
    const origin = origins[fingerprint(proof)];
    return origin !== undefined && origin !== to;
  };
  const cleaned = Object.keys(origins).length > 0 ? client.withoutThinking?.(foreign) : undefined;
  if (cleaned)
    warnings.push({
      param: "thinking",
      message: `${cleaned.dropped} earlier thinking item(s) written by another deployment were not replayed to ${to}, which would refuse their signatures`,
    });
  return { client: cleaned?.request ?? client, origins, warnings, movedFrom };
}
