import type { ApolloServerPlugin, GraphQLRequestListener } from "@apollo/server";
import {
  getVariableValues,
  GraphQLError,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type GraphQLSchema,
  type ValidationRule,
} from "graphql";
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from "graphql-query-complexity";
import type { GqlContext } from "./context.js";

/** Depth of the deepest field path in an operation, following fragments (cycles cut off). */
export function operationDepth(op: OperationDefinitionNode, fragments: Map<string, FragmentDefinitionNode>): number {
  const walk = (set: SelectionSetNode | undefined, seen: Set<string>): number => {
    if (!set) return 0;
    let max = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value.startsWith("__")) continue;
        max = Math.max(max, 1 + walk(sel.selectionSet, seen));
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        max = Math.max(max, walk(sel.selectionSet, seen));
      } else if (!seen.has(sel.name.value)) {
        const fragment = fragments.get(sel.name.value);
        max = Math.max(max, walk(fragment?.selectionSet, new Set([...seen, sel.name.value])));
      }
    }
    return max;
  };
  return walk(op.selectionSet, new Set());
}

function usesIntrospection(document: DocumentNode): boolean {
  let found = false;
  const visit = (set: SelectionSetNode | undefined) => {
    for (const sel of set?.selections ?? []) {
      if (sel.kind === Kind.FIELD && (sel.name.value === "__schema" || sel.name.value === "__type")) found = true;
      if ("selectionSet" in sel) visit(sel.selectionSet);
    }
  };
  for (const def of document.definitions) if ("selectionSet" in def) visit(def.selectionSet);
  return found;
}

const refuse = (code: string, message: string, status = 400) =>
  new GraphQLError(message, { extensions: { code, http: { status } } });

interface DocumentFacts {
  introspection: boolean;
  depth: number;
  /** Known only for operations that declare no variables. */
  complexity?: number;
}

// Apollo hands the same parsed document to every request with the same query text (its document
// store), so what depends on the document alone is computed once per document and operation.
const factsByDocument = new WeakMap<DocumentNode, Map<string, DocumentFacts>>();

function factsOf(document: DocumentNode, operation: OperationDefinitionNode | undefined, operationName: string): DocumentFacts {
  let byOperation = factsByDocument.get(document);
  const known = byOperation?.get(operationName);
  if (known) return known;
  const fragments = new Map(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const facts: DocumentFacts = { introspection: usesIntrospection(document), depth: operation ? operationDepth(operation, fragments) : 0 };
  if (!byOperation) factsByDocument.set(document, (byOperation = new Map()));
  byOperation.set(operationName, facts);
  return facts;
}

/**
 * The cost depends on the variables; getComplexity coerces them and throws a plain Error on a
 * missing or wrong-typed one. Coerce first and answer as Apollo would (BAD_USER_INPUT).
 */
function measureComplexity(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode | undefined, request: { operationName?: string | null; variables?: Record<string, unknown> | null }): number {
  const coerced = operation ? getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {}, { maxErrors: 5 }) : undefined;
  if (coerced?.errors?.length) {
    throw new GraphQLError(coerced.errors.map((e) => e.message).join("\n"), { extensions: { code: "BAD_USER_INPUT", http: { status: 400 } } });
  }
  return getComplexity({
    schema,
    operationName: request.operationName ?? undefined,
    query: document,
    variables: request.variables ?? {},
    estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
  });
}

/**
 * Query depth and cost limits, and introspection only for callers allowed the IDE
 * (everyone in development, superadmins elsewhere).
 */
export function limitsPlugin(options: {
  schema: () => GraphQLSchema;
  maxDepth: number;
  maxComplexity: number;
  introspectionAllowed: (ctx: GqlContext) => boolean;
}): ApolloServerPlugin<GqlContext> {
  // One listener for every request (it reads only its arguments): nothing allocated per request.
  const listener: GraphQLRequestListener<GqlContext> = {
    async didResolveOperation({ document, operation, request, contextValue }) {
      const facts = factsOf(document, operation, request.operationName ?? "");
      if (facts.introspection && !options.introspectionAllowed(contextValue)) {
        throw refuse("INTROSPECTION_DISABLED", "Introspection is available to superadmins only", 403);
      }
      // No operation resolved (several and no operationName, or a name that matches none): Apollo
      // answers OPERATION_RESOLUTION_FAILURE itself and runs nothing, so there is nothing to
      // measure. Measuring the whole document would coerce every operation's variables (a 500).
      if (!operation) return;
      if (facts.depth > options.maxDepth) {
        throw refuse("QUERY_TOO_DEEP", `Query depth ${facts.depth} exceeds the maximum of ${options.maxDepth}`);
      }
      // Without variables the cost is a function of the document: measured once per document.
      const variablesDeclared = (operation?.variableDefinitions?.length ?? 0) > 0;
      const complexity = !variablesDeclared && facts.complexity !== undefined ? facts.complexity : measureComplexity(options.schema(), document, operation, request);
      if (!variablesDeclared) facts.complexity = complexity;
      if (complexity > options.maxComplexity) {
        throw refuse("QUERY_TOO_COMPLEX", `Query cost ${complexity} exceeds the maximum of ${options.maxComplexity}`);
      }
    },
  };
  return { requestDidStart: async () => listener };
}

/**
 * Argument values written into the document (`response: {a: {a: …}}` for a JSON scalar) nest no
 * deeper than `max`: the code that reads them is recursive. Variables are held to the same limit
 * by the JSON body parser.
 */
export function maxValueDepthRule(max: number): ValidationRule {
  return (context) => {
    let depth = 0;
    const enter = (node: { loc?: unknown }) => {
      depth += 1;
      if (depth === max + 1) context.reportError(new GraphQLError(`An argument value is nested deeper than ${max} levels`, { nodes: node as never }));
    };
    const leave = () => void (depth -= 1);
    return { ObjectValue: { enter, leave }, ListValue: { enter, leave } };
  };
}
