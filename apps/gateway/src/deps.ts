import type { SignatureStore } from "@turnpike/providers";
import type { MessagesRequest } from "@turnpike/schema";
import type { Config } from "./config";
import type { KeyService } from "./keys/key-service";
import type { AuthGuard } from "./limits/auth-guard";
import type { BudgetTracker } from "./limits/budget-tracker";
import type { RateLimiter } from "./limits/rate-limiter";
import type { Catalog, Vendor } from "./routing/catalog";
import type { Store } from "./storage/store";
import type { Upstream } from "./upstream/upstream";
import type { UsageWriter } from "./usage/usage-writer";

/** Everything the app needs, passed in (STYLE rule 6): tests build their own. */
export interface GatewayDeps {
  config: Config;
  catalog: Catalog;
  store: Store;
  keys: KeyService;
  limiter: RateLimiter;
  budgets: BudgetTracker;
  authGuard: AuthGuard;
  usage: UsageWriter;
  upstreams: Record<Vendor, Upstream>;
  fetch: typeof fetch;
  /** Tokens in a piece of text (the local tokenizer). */
  countText: (text: string) => number;
  /** Tokens of a whole prompt in the pivot format. */
  countPrompt: (request: MessagesRequest) => number;
  signatures: SignatureStore;
  /** Bearer secret of the admin API. */
  adminKey: string;
}
