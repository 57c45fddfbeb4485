/** A deployment's circuit: `closed` serves, `open` is skipped, `half_open` lets one probe through. */
export type BreakerState = "closed" | "open" | "half_open";

export interface BreakerSettings {
  /** Consecutive failures that open the circuit. */
  failures: number;
  /** Seconds an open circuit is skipped before one probe may try it. */
  cooldownS: number;
}

/**
 * One deployment's health, in this process: consecutive failures open it for a cooldown, then
 * the first request to pick it is the probe (half-open) — its success closes the circuit, its
 * failure opens it again. Plain counters, no timers: time is read when a request asks.
 */
export class Breaker {
  private consecutive = 0;
  private openedAt = 0;
  private probing = false;
  private opened = false;
  /** Failures in all (for `GET /admin/deployments`) and when the last one happened. */
  failuresTotal = 0;
  lastFailureAt: number | undefined;
  lastError: string | undefined;
  /** Moving average of the time to the upstream's answer, in ms (0 until one answered). */
  latencyMs = 0;

  constructor(private readonly settings: BreakerSettings) {}

  state(now: number): BreakerState {
    if (!this.opened) return "closed";
    if (this.probing || now - this.openedAt >= this.settings.cooldownS * 1000) return "half_open";
    return "open";
  }

  /** May a request be sent here now? A half-open circuit allows only the one probe in flight. */
  available(now: number): boolean {
    if (!this.opened) return true;
    return !this.probing && now - this.openedAt >= this.settings.cooldownS * 1000;
  }

  /** The request picked this deployment: on a half-open circuit it is the probe. */
  take(now: number): void {
    if (this.opened && now - this.openedAt >= this.settings.cooldownS * 1000) this.probing = true;
  }

  /** Seconds until an open circuit may be probed (0 when it may now). */
  waitSeconds(now: number): number {
    if (!this.opened) return 0;
    return Math.max(0, Math.ceil((this.openedAt + this.settings.cooldownS * 1000 - now) / 1000));
  }

  success(latencyMs: number): void {
    this.consecutive = 0;
    this.opened = false;
    this.probing = false;
    this.latencyMs = this.latencyMs === 0 ? latencyMs : this.latencyMs * 0.8 + latencyMs * 0.2;
  }

  failure(now: number, reason: string): void {
    this.failuresTotal++;
    this.lastFailureAt = now;
    this.lastError = reason;
    this.consecutive++;
    // A failed probe opens the circuit again at once; otherwise after `failures` in a row.
    if (this.probing || this.consecutive >= this.settings.failures) {
      this.opened = true;
      this.openedAt = now;
      this.probing = false;
    }
  }

  /** A request that picked this deployment ended without a verdict (the client left). */
  release(): void {
    this.probing = false;
  }

  get consecutiveFailures(): number {
    return this.consecutive;
  }
}
