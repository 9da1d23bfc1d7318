/** A node of PostgreSQL's `explain (format json)` plan, with the fields the plan tests read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** The plan's node types, top down (`Limit > Index Scan`). */
export function nodeTypes(plan: PlanNode): string[] {
  return [plan['Node Type'], ...(plan.Plans ?? []).flatMap(nodeTypes)];
}

/** Every node of the plan, top down. */
export function flatten(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(flatten)];
}
