import { z } from "zod";

/** The name as typed; its rules (IDNA, public suffixes, consumer providers) are in src/lib/domain-names.ts. */
export const addDomainSchema = z.object({
  domain: z.string().trim().min(1, "give a domain name, e.g. example.com").max(300).describe("The domain, e.g. example.com (an internationalised name is stored in its xn-- form)"),
});
export type AddDomainInput = z.input<typeof addDomainSchema>;
