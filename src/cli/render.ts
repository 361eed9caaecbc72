/** One row of a table: its columns by name. */
export type Row = Record<string, unknown>
type Output = Row | Row[]

/** What a command prints: the document for --json, the text otherwise; and its exit code (0 unless said). */
export interface Printed {
  json: unknown
  text: string
  exitCode?: number
}

/** Rows printed as they are: the rows themselves for --json, a table otherwise. */
export function rows(output: Output): Printed {
  return { json: output, text: table(output) }
}

/** Writes what a command printed to stdout: its document with --json, its text otherwise. */
export function print(printed: Printed, json: boolean): void {
  process.stdout.write(json ? `${JSON.stringify(printed.json)}\n` : printed.text)
}

function cell(value: unknown): string {
  if (Array.isArray(value)) return value.join(',')
  return value === null || value === undefined ? '' : String(value)
}

/** A readable table: one header line, one line per row, columns padded. */
export function table(output: Output): string {
  const rows = Array.isArray(output) ? output : [output]
  if (rows.length === 0) return '(none)\n'
  const columns = Object.keys(rows[0] ?? {})
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd()
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n') + '\n'
}
