/**
 * Session affinity (docs/design.md, "Sessions stay on one deployment"): which deployment a coding
 * agent's session is on, so that its later turns go there while it is healthy (its prompt cache
 * is there, and its thinking signatures are valid there), and, once the session has moved, which
 * deployment each thinking signature of its history came from (those are not replayed elsewhere).
 */

/** One session's place. */
export interface SessionPlace {
  /** The deployment (its name within the model) that serves the session now. */
  deployment: string;
  /**
   * Fingerprints of thinking signatures in the session's history → the deployment that wrote
   * them. Filled when the session moves: every signature it carried then came from where it was.
   */
  origins: Record<string, string>;
}

/** Where sessions' places are kept: this process, or Redis shared by every instance. */
export interface AffinityStore {
  get(key: string): Promise<SessionPlace | undefined>;
  set(key: string, place: SessionPlace): Promise<void>;
}

/** How long a session is remembered after its last move: a working day of an agent and more. */
export const AFFINITY_TTL_MS = 24 * 3600 * 1000;

/** The key of a session's place: per requested model, since each model has its own deployments. */
export function affinityKey(model: string, session: string): string {
  return `${model}\n${session}`;
}

/** Sessions in this process: at most `capacity`, the least recently set forgotten first. */
export class MemoryAffinity implements AffinityStore {
  private readonly places = new Map<string, { place: SessionPlace; until: number }>();

  constructor(
    private readonly now: () => number,
    private readonly capacity = 100_000,
  ) {}

  get(key: string): Promise<SessionPlace | undefined> {
    const hit = this.places.get(key);
    if (hit && hit.until <= this.now()) this.places.delete(key);
    return Promise.resolve(hit && hit.until > this.now() ? hit.place : undefined);
  }

  set(key: string, place: SessionPlace): Promise<void> {
    this.places.delete(key);
    this.places.set(key, { place, until: this.now() + AFFINITY_TTL_MS });
    // A Map iterates in insertion order: the first key is the least recently set.
    if (this.places.size > this.capacity) this.places.delete(this.places.keys().next().value!); // size > capacity ≥ 1: a first key exists
    return Promise.resolve();
  }
}
