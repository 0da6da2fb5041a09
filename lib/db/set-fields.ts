import type { ExpressionValues } from './item.ts';

/**
 * The SET part of an UpdateExpression for a record's fields: `#setN = :setN` for each field whose value is
 * defined, its name and value added to `names` and `values` (which the caller's condition shares).
 */
export function setFields(fields: ExpressionValues, names: Record<string, string>, values: ExpressionValues): string[] {
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([field, value], i) => {
      names[`#set${i}`] = field;
      values[`:set${i}`] = value;
      return `#set${i} = :set${i}`;
    });
}
