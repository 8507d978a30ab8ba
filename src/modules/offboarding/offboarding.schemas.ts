import { z } from "zod";
import { paginationSchema } from "../../lib/pagination.js";

/** `suspend` is reversible (`reinstate`); `remove` ends the membership for good. */
export const offboardSchema = z.object({
  mode: z.enum(["suspend", "remove"]),
  reason: z.string().trim().min(1).max(1000),
});
export type OffboardInput = z.input<typeof offboardSchema>;
export type OffboardMode = z.output<typeof offboardSchema>["mode"];

export const receiptsQuerySchema = paginationSchema.extend({ userId: z.uuid().optional() });
export type ReceiptsQueryInput = z.input<typeof receiptsQuerySchema>;
