/**
 * The environment `npm run dev` runs its two processes in (src/tasks/dev.ts): this process's own,
 * with development's two defaults under it (ARCHITECTURE rule 5: only src/config reads process.env).
 */
export function developmentEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { NODE_ENV: "development", APP_URL: "http://localhost:5173", ...process.env, ...extra };
}
