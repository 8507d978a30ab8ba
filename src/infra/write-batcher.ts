import { isDependencyOutage } from "./db-errors.js";

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (e: unknown) => void;
}

/**
 * Writes that reach the database in the same turn of the event loop go as one statement (one round
 * trip, one commit) instead of one each: under load, several requests get there together, and each
 * still answers only once its own write is done. `write` stores a batch and returns one result per
 * item, in the batch's order. With `groupOf`, only items of the same group share a statement (and
 * the locks it takes). A statement the database refuses is tried again one item at a time, so an
 * item it cannot store fails its own request only; an outage fails them all (a retry could not
 * tell what was stored). A group reaching `max` items is written at once.
 */
export function writeBatcher<T, R>(write: (batch: T[]) => Promise<R[]>, options: { max: number; groupOf?: (item: T) => string }): (item: T) => Promise<R> {
  let pending = new Map<string, Waiting<T, R>[]>();
  let scheduled = false;

  const settle = async (group: Waiting<T, R>[]) => {
    try {
      const results = await write(group.map((w) => w.item));
      group.forEach((w, i) => w.resolve(results[i]!));
    } catch (e) {
      if (group.length === 1 || isDependencyOutage(e)) {
        for (const w of group) w.reject(e);
        return;
      }
      await Promise.all(group.map((w) => write([w.item]).then(([result]) => w.resolve(result!), (err: unknown) => w.reject(err))));
    }
  };
  const flush = () => {
    const groups = [...pending.values()];
    pending = new Map();
    scheduled = false;
    for (const group of groups) void settle(group);
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      const key = options.groupOf?.(item) ?? "";
      const group = pending.get(key) ?? [];
      group.push({ item, resolve, reject });
      pending.set(key, group);
      if (group.length >= options.max) {
        pending.delete(key);
        void settle(group);
      } else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
