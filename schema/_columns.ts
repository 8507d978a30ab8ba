import { timestamp, uuid } from "drizzle-orm/pg-core";

/** Shared column helpers: UUID ids, timestamptz everywhere, soft deletes through `deleted_at`. */
export const id = () => uuid("id").primaryKey().defaultRandom();
export const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
export const createdAt = () => tstz("created_at").notNull().defaultNow();
export const updatedAt = () => tstz("updated_at").notNull().defaultNow();
export const deletedAt = () => tstz("deleted_at");
