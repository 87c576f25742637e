/**
 * Leases of the requests this instance is running: each holds a parallel slot and a budget reservation that expire
 * {@link LEASE_MS} after their last renewal, and this instance renews them every {@link RENEW_MS} while the request
 * runs. A holder that crashed (or whose release failed while the store was down) stops renewing, so its slot and its
 * reservation free themselves within {@link LEASE_MS}.
 */
import type { LimitCounters, SpendStore } from "../../stores/types.js";
import type { Logger } from "../../util/logger.js";

/** How long a slot or reservation lives without a renewal. */
export const LEASE_MS = 30_000;
/** How often the running requests' leases are renewed. */
export const RENEW_MS = 10_000;

interface Held {
  keyId: string;
  period: string;
}

/** The renewer of one instance's leases. */
export interface LeaseRenewer {
  hold(id: string, keyId: string, period: string): void;
  release(id: string): void;
  /** Renews every lease held now (the timer calls it). */
  renewNow(): Promise<void>;
  close(): void;
}

/**
 * Renews the leases of the requests held, on a timer that runs while some are: it stops at its first tick that finds
 * none (stopping it at every release, then starting it again at the next hold, cost each request a timer).
 */
export function createLeaseRenewer(options: {
  counters: LimitCounters;
  spend: SpendStore;
  logger: Logger;
  now: () => number;
  leaseMs?: number;
  renewMs?: number;
}): LeaseRenewer {
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const held = new Map<string, Held>();
  let timer: NodeJS.Timeout | undefined;
  const renewNow = async () => {
    const groups = new Map<string, { keyId: string; period: string; ids: string[] }>();
    for (const [id, { keyId, period }] of held) {
      const group = groups.get(`${keyId}\u0000${period}`) ?? { keyId, period, ids: [] };
      group.ids.push(id);
      groups.set(`${keyId}\u0000${period}`, group);
    }
    const now = options.now();
    await Promise.all(
      [...groups.values()].map(async ({ keyId, period, ids }) => {
        try {
          await options.counters.renew(keyId, ids, now, leaseMs);
          await options.spend.renew(keyId, period, ids, now, leaseMs);
        } catch (error) {
          options.logger.debug("could not renew the leases of running requests", { error });
        }
      }),
    );
  };
  const stop = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return {
    hold(id, keyId, period) {
      held.set(id, { keyId, period });
      if (timer === undefined) {
        timer = setInterval(() => {
          if (held.size === 0) stop();
          else void renewNow();
        }, options.renewMs ?? RENEW_MS);
        timer.unref();
      }
    },
    release(id) {
      held.delete(id);
    },
    renewNow,
    close: stop,
  };
}
