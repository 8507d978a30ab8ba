import { z } from "zod";

/** The original API took `public_key`; its CLI sends `key`. Both are accepted. */
export const addKeySchema = z
  .object({
    publicKey: z.string().max(16_384).optional(),
    key: z.string().max(16_384).optional(),
    description: z.string().trim().max(1000).optional(),
  })
  .refine((v) => v.publicKey !== undefined || v.key !== undefined, { path: ["publicKey"], message: "is required" });
export type AddKeyInput = z.input<typeof addKeySchema>;

export const describeKeySchema = z.object({ description: z.string().trim().max(1000).nullable() });
export type DescribeKeyInput = z.input<typeof describeKeySchema>;
export const verifyKeySchema = z.object({ signature: z.string().min(1).max(16_384), action: z.string().max(64).optional() });
export type VerifyKeyInput = z.input<typeof verifyKeySchema>;
