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

/**
 * Two requests queued behind held rows in a known order: `first` is sent and waits, then `second`
 * is sent and waits, then the rows are released (after `change`, when given). Their answers.
 */
export async function queuedBehind<A, B>(held: Awaited<ReturnType<typeof holdRows>>, first: () => Promise<A>, second: () => Promise<B>, change?: (tx: Tx) => Promise<unknown>): Promise<[A, B]> {
  const a = first();
  if ((await held.waiting(1)) !== 1) throw new Error("the first request did not wait on the held rows");
  const b = second();
  if ((await held.waiting(2)) !== 2) throw new Error("the second request did not wait on the held rows");
  await held.release(change);
  return Promise.all([a, b]);
}
