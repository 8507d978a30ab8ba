import { Field, Int, ObjectType, type ClassType } from "type-graphql";
import type { Page } from "../../lib/pagination.js";

/**
 * One page of a page-numbered list, as the services answer it (`Page<T>`, also REST's `page`,
 * `per_page`, `pages`). A generic type: each list names its own page type by extending it,
 * `class AuditLogPage extends Paged(AuditEntry) {}`, so the SDL keeps one named type per list.
 */
export function Paged<T extends object>(Item: ClassType<T>) {
  @ObjectType()
  abstract class PagedType implements Page<T> {
    @Field(() => [Item]) items: T[];
    @Field(() => Int) count: number;
    @Field(() => Int) page: number;
    @Field(() => Int) perPage: number;
    @Field(() => Int) pages: number;
  }
  return PagedType;
}
