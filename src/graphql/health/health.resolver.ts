import { Query, Resolver } from "type-graphql";
import type { Services } from "../../container.js";
import { Health } from "./health.types.js";

@Resolver()
export class HealthResolver {
  constructor(private readonly s: Pick<Services, "health">) {}

  @Query(() => Health, { description: "Liveness of the service" })
  health(): Health {
    return this.s.health.health();
  }
}
