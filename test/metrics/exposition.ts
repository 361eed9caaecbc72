/** One sample of the Prometheus text exposition format: `name{label="value",…} value`. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** The samples of an exposition text (comments and blank lines skipped); a line that is not a sample throws. */
export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = SAMPLE.exec(line)
    if (match === null) throw new Error(`not a sample line: ${JSON.stringify(line)}`)
    const labels: Record<string, string> = {}
    for (const label of (match[2] ?? '').matchAll(LABEL)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\(.)/g, (_all, escaped: string) => (escaped === 'n' ? '\n' : escaped))
    }
    const valueText = match[3] ?? ''
    // Prometheus reads NaN and Inf in any case (prom-client writes NaN as "Nan").
    const word = valueText.toLowerCase()
    const value = word === '+inf' || word === 'inf' ? Infinity : word === '-inf' ? -Infinity : word === 'nan' ? NaN : Number(valueText)
    if (Number.isNaN(value) && word !== 'nan') throw new Error(`not a sample value: ${JSON.stringify(line)}`)
    samples.push({ name: match[1] ?? '', labels, value })
  }
  return samples
}

/** The one sample named `name` whose labels include `labels`; undefined when there is none, an error when several match. */
export function sampleOf(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample | undefined {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]
}
