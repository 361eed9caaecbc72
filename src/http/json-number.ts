/**
 * The text of a number in a JSON body as the client wrote it, so an amount sent as a JSON number
 * is read from its digits, never through a binary float (1.005 stays 1.005; 12345678901234567.5
 * stays itself). Only the top level is looked at: every amount of the API is a top-level field.
 */

const WHITE = /\s/

function skipString(text: string, at: number): number {
  // `at` is the opening quote; returns the index after the closing one.
  let i = at + 1
  while (i < text.length) {
    const char = text[i]
    if (char === '\\') i += 2
    else if (char === '"') return i + 1
    else i++
  }
  return i
}

/**
 * The literal of the top-level key `field` of the JSON object `text`, when its value is a number;
 * undefined otherwise. `text` has already been parsed as JSON (with no duplicate keys), so the
 * scan only has to follow its structure.
 */
export function topLevelNumberText(text: string, field: string): string | undefined {
  let depth = 0
  let i = 0
  let expectKey = false
  while (i < text.length) {
    const char = text[i] as string
    if (char === '"') {
      const end = skipString(text, i)
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(i, end)) as string
        let j = end
        while (j < text.length && WHITE.test(text[j] as string)) j++
        // j is at the colon
        j++
        while (j < text.length && WHITE.test(text[j] as string)) j++
        if (key === field) {
          const start = j
          while (j < text.length && /[-+0-9.eE]/.test(text[j] as string)) j++
          return j > start ? text.slice(start, j) : undefined
        }
        expectKey = false
        i = j
        continue
      }
      i = end
      continue
    }
    if (char === '{' || char === '[') {
      depth++
      expectKey = char === '{' && depth === 1
    } else if (char === '}' || char === ']') {
      depth--
    } else if (char === ',' && depth === 1) {
      expectKey = true
    }
    i++
  }
  return undefined
}
