import type postgres from "postgres";

type Tx = postgres.TransactionSql;

/**
 * Rows held by a transaction of its own (PostgreSQL), so that requests reaching a write of those
 * rows wait there: a race made to happen on purpose. `waiting(n)` waits until n statements of the
 * database wait on a lock and says how many it saw; `release(change)` runs `change` in the holding
 * transaction, then commits.
 */
export async function holdRows(db: postgres.Sql, lock: (tx: Tx) => Promise<unknown>) {
  let release!: (change?: (tx: Tx) => Promise<unknown>) => void;
  const released = new Promise<((tx: Tx) => Promise<unknown>) | undefined>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = db.begin(async (tx) => {
    await lock(tx);
    locked();
    const change = await released;
    if (change) await change(tx);
  });
  await isLocked;
  return {
    async waiting(n: number): Promise<number> {
      let seen = 0;
      for (let i = 0; i < 500 && seen < n; i++) {
        await new Promise((r) => setTimeout(r, 20));
        const [w] = await db`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
        seen = w!.n;
      }
      return seen;
    },
    async release(change?: (tx: Tx) => Promise<unknown>): Promise<void> {
      release(change);
      await holder;
    },
  };
}
