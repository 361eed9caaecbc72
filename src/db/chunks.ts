/** Rows per multi-row statement: well under SQLite's 32,766 bound parameters. */
const CHUNK = 500

/** `items` in slices of at most 500, for statements that bind one or more values per item. */
export function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK))
  return out
}
