import { Arg, Authorized, Ctx, ID, Mutation, Query, Resolver, type ClassType } from "type-graphql";
import type { Services } from "../../container.js";
import { message, MessagePayload } from "../common/common.types.js";
import type { InputOf } from "../common/inputs.js";
import { OrgRole } from "../common/org-role.js";
import type { RequestContext } from "../../lib/request-context.js";
import type { GqlContext } from "../context.js";
import { org } from "../org-extension.js";
import { DirectoryMember } from "./directory.types.js";

/** The organization groups: departments and principals share their operations and rules. */
type GroupService = "departments" | "principals";

interface OrgGroup<K extends GroupService> {
  /** The service, and the plural the list is named by: `departments`. */
  service: K;
  /** The object type's name, which names the operations: `Department` → `createDepartment`, `departmentId`. */
  name: string;
  Item: ClassType;
  /** Input classes that implement the service's inputs (`GqlInputOf`): checked where the group is declared. */
  Input: new () => InputOf<K, "create">;
  UpdateInput: new () => InputOf<K, "update">;
}

/**
 * The two services' writes as this resolver, written for either, passes them on: each takes its own
 * input, which TypeScript cannot pair with `K` here; `OrgGroup` pairs the input classes with it.
 */
interface GroupWrites {
  create(ctx: RequestContext, orgId: string, input: unknown): Promise<unknown>;
  update(ctx: RequestContext, orgId: string, id: string, input: unknown): Promise<unknown>;
}

/**
 * The operations every organization group has, written once: list, get, create, update, delete, and
 * its members (`departments`, `department`, `createDepartment`, …, `removeDepartmentMember`, with a
 * `departmentId` argument). A group's resolver extends it with what only that group has. Guests read;
 * admins change (the services decide, `@org` shows it in the schema).
 */
export function orgGroupResolver<K extends GroupService>(group: OrgGroup<K>) {
  const one = group.name.charAt(0).toLowerCase() + group.name.slice(1);
  const idArg = `${one}Id`;

  @Resolver()
  abstract class OrgGroupResolver {
    constructor(protected readonly s: Pick<Services, K>) {}

    private get groups(): Services[GroupService] {
      return this.s[group.service];
    }

    private get writes(): GroupWrites {
      return this.s[group.service];
    }

    @Authorized()
    @org(OrgRole.guest)
    @Query(() => [group.Item], { name: group.service })
    list(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string) {
      return this.groups.list(ctx, orgId);
    }

    @Authorized()
    @org(OrgRole.guest)
    @Query(() => group.Item, { name: one })
    get(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg(idArg, () => ID) id: string) {
      return this.groups.get(ctx, orgId, id);
    }

    @Authorized()
    @org(OrgRole.admin)
    @Mutation(() => group.Item, { name: `create${group.name}` })
    create(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg("input", () => group.Input) input: InputOf<K, "create">) {
      return this.writes.create(ctx, orgId, input);
    }

    @Authorized()
    @org(OrgRole.admin)
    @Mutation(() => group.Item, { name: `update${group.name}` })
    update(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg(idArg, () => ID) id: string, @Arg("input", () => group.UpdateInput) input: InputOf<K, "update">) {
      return this.writes.update(ctx, orgId, id, input);
    }

    @Authorized()
    @org(OrgRole.admin)
    @Mutation(() => MessagePayload, { name: `delete${group.name}` })
    async delete(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg(idArg, () => ID) id: string) {
      await this.groups.delete(ctx, orgId, id);
      return message(`${group.name} deleted`);
    }

    @Authorized()
    @org(OrgRole.guest)
    @Query(() => [DirectoryMember], { name: `${one}Members` })
    members(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg(idArg, () => ID) id: string) {
      return this.groups.listMembers(ctx, orgId, id);
    }

    @Authorized()
    @org(OrgRole.admin)
    @Mutation(() => DirectoryMember, { name: `add${group.name}Member` })
    addMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg(idArg, () => ID) id: string, @Arg("email", () => String) email: string) {
      return this.groups.addMember(ctx, orgId, id, { email });
    }

    @Authorized()
    @org(OrgRole.admin)
    @Mutation(() => MessagePayload, { name: `remove${group.name}Member` })
    async removeMember(@Ctx() { ctx }: GqlContext, @Arg("orgId", () => ID) orgId: string, @Arg(idArg, () => ID) id: string, @Arg("userId", () => ID) userId: string) {
      await this.groups.removeMember(ctx, orgId, id, userId);
      return message("Member removed");
    }
  }
  return OrgGroupResolver;
}
