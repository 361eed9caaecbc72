import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** Every TypeScript file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm

/** The project's own modules each file under `root` imports (type imports included), as paths relative to `root`. */
export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, 'utf8')
    const targets: string[] = []
    for (const match of text.matchAll(IMPORT)) {
      const specifier = match[1] ?? ''
      targets.push(relative(root, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))))
    }
    graph.set(relative(root, file), targets)
  }
  return graph
}

/** Each import circle once, as the files along it. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  const circles: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    stack.push(file)
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue
      if (state.get(target) === 'open') circles.push([...stack.slice(stack.indexOf(target)), target])
      else if (state.get(target) === undefined) visit(target)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of [...graph.keys()].sort()) if (state.get(file) === undefined) visit(file)
  return circles
}

/** A repository: every file under db/, and each module's repository files (repository.ts, events-repository.ts, delivery-log-repository.ts). */
const REPOSITORY = /^db\/|^(?:resources\/[^/]+|apps|events)\/(?:[\w-]+-)?repository\.ts$/

/** What a repository may not import: the HTTP side (routes, API schemas and the objects built from them, auth, HTTP errors) and the delivery engine. */
const NOT_FOR_REPOSITORIES = /^resources\/[^/]+\/(?:routes|schemas|delivery-routes|delivery-schemas|objects)|^(?:auth|http|delivery|idempotency)\/|^errors\.ts$|^schemas\/common\.ts$/

/** Each import of a repository that reaches past the storage layer, as "file -> import". */
export function repositoryLayerViolations(graph: Map<string, string[]>): string[] {
  const violations: string[] = []
  for (const [file, targets] of graph) {
    if (!REPOSITORY.test(file)) continue
    for (const target of targets) if (NOT_FOR_REPOSITORIES.test(target)) violations.push(`${file} -> ${target}`)
  }
  return violations.sort()
}
