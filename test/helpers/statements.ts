/**
 * Counting the database statements a request makes (issue 38, ARCHITECTURE rule 18): pass
 * `onStatement` to startTestApp, then ask `fewest(run)`. The count is the fewest over a few runs,
 * after one that fills the caches the request may use: what the app does on a clock beside the
 * request (a job's poll, a batched write, a once-a-minute "last used") only ever adds a statement
 * to one of them, while a read per row adds to every run.
 */
export interface StatementCounter {
  /** For startTestApp's overrides: sees every statement the app sends. */
  onStatement: (sql: string) => void;
  /** The fewest statements of `runs` runs of `run` (after one unmeasured run), with their SQL. */
  fewest(run: () => Promise<unknown>, runs?: number): Promise<{ count: number; sql: string[] }>;
}

export function statementCounter(): StatementCounter {
  let counting = false;
  let statements: string[] = [];
  return {
    onStatement: (sql) => {
      if (counting) statements.push(sql);
    },
    async fewest(run, runs = 2) {
      await run();
      let fewest: string[] | undefined;
      for (let i = 0; i < runs; i++) {
        statements = [];
        counting = true;
        try {
          await run();
        } finally {
          counting = false;
        }
        if (!fewest || statements.length < fewest.length) fewest = statements;
      }
      return { count: fewest!.length, sql: fewest! };
    },
  };
}
