import type { Clock } from "../../infra/clock.js";
import type { Db } from "../../infra/db.js";
import { outboxStatsRepository } from "./outbox-stats.repository.js";

/** The outbox's backlog for monitoring: how many messages wait, and how long the oldest has waited. */
export class OutboxStatsService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async snapshot(): Promise<{ byStatus: Record<string, number>; oldestPendingAgeSeconds: number }> {
    const rows = await outboxStatsRepository.unsentByStatus(this.db);
    const byStatus: Record<string, number> = { pending: 0, failed: 0, dead: 0 };
    let oldestPendingAgeSeconds = 0;
    for (const row of rows) {
      byStatus[row.status] = Number(row.n);
      if (row.status === "pending" && row.oldest) {
        oldestPendingAgeSeconds = Math.max(0, (this.clock.now().getTime() - new Date(row.oldest).getTime()) / 1000);
      }
    }
    return { byStatus, oldestPendingAgeSeconds };
  }
}
