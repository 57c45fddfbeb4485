/**
 * Which back ends an instance runs on and whether each can be reached: what start-up prints and
 * `GET /ready` reports (routes/health.ts).
 */
export interface BackendsReport {
  ready: boolean;
  draining: boolean;
  store: { kind: "sqlite" | "postgres"; reachable: boolean };
  limits: { kind: "memory" | "redis"; reachable: boolean; fail_mode?: "open" | "closed" };
  /** Usage records in the local journal not yet in PostgreSQL. */
  journal?: { waiting: number };
}

export interface Backends {
  /** One line for the start-up log. */
  readonly summary: string;
  report(): Promise<BackendsReport>;
  /** Readiness turns false from now on (shutdown has begun). */
  drain(): void;
}

/** The embedded back ends: always reachable. */
export class EmbeddedBackends implements Backends {
  private draining = false;
  constructor(readonly summary = "Back ends: store SQLite (embedded), limits in process memory.") {}

  drain(): void {
    this.draining = true;
  }

  async report(): Promise<BackendsReport> {
    return {
      ready: !this.draining,
      draining: this.draining,
      store: { kind: "sqlite", reachable: true },
      limits: { kind: "memory", reachable: true },
    };
  }
}

/** Back ends of a scaled-out instance, probed when asked. */
export class ProbedBackends implements Backends {
  private draining = false;

  constructor(
    readonly summary: string,
    private readonly probe: {
      store: { kind: "sqlite" | "postgres"; reachable: () => Promise<boolean> };
      limits: { kind: "memory" | "redis"; reachable: () => boolean; failMode?: "open" | "closed" };
      journal?: () => number;
    },
  ) {}

  drain(): void {
    this.draining = true;
  }

  async report(): Promise<BackendsReport> {
    const storeOk = await this.probe.store.reachable();
    const limitsOk = this.probe.limits.reachable();
    return {
      ready: !this.draining && storeOk && limitsOk,
      draining: this.draining,
      store: { kind: this.probe.store.kind, reachable: storeOk },
      limits: {
        kind: this.probe.limits.kind,
        reachable: limitsOk,
        ...(this.probe.limits.failMode ? { fail_mode: this.probe.limits.failMode } : {}),
      },
      ...(this.probe.journal ? { journal: { waiting: this.probe.journal() } } : {}),
    };
  }
}
