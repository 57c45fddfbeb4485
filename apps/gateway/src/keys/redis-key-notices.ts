import type { RedisLink } from "../storage/redis-link";

/**
 * Key-change notices between instances: an instance that changes a key says so, every other
 * instance re-reads its keys at once. Best effort by nature (a notice sent while an instance is
 * disconnected is lost), so the directory's short reload interval stays the backstop.
 */
export interface KeyNotices {
  publish(keyId: string): Promise<void>;
  subscribe(fn: (keyId: string) => void): Promise<void>;
}

export class RedisKeyNotices implements KeyNotices {
  constructor(private readonly link: RedisLink) {}

  publish(keyId: string): Promise<void> {
    return this.link.publish("keys", keyId);
  }

  subscribe(fn: (keyId: string) => void): Promise<void> {
    return this.link.subscribe("keys", fn);
  }
}
