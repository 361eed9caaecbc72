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
const NOT_FOR_REPOSITORIES = /^resources\/[^/]+\/(?:routes|schemas|delivery-routes|delivery-schemas|objects)|^(?:auth|http|delivery|idempotency)\/|^schemas\/common\.ts$/

/** Each import of a repository that reaches past the storage layer, as "file -> import". */
export function repositoryLayerViolations(graph: Map<string, string[]>): string[] {
  const violations: string[] = []
  for (const [file, targets] of graph) {
    if (!REPOSITORY.test(file)) continue
    for (const target of targets) if (NOT_FOR_REPOSITORIES.test(target)) violations.push(`${file} -> ${target}`)
  }
  return violations.sort()
}

/** A module's folder under resources/ and the rest of the path, or undefined for a file that is not in one. */
const MODULE_FILE = /^resources\/([^/]+)\/(.+)$/

/** The files of resources/ every module may import: what a manifest declares, and what a Resource is. */
const RESOURCE_CONTRACT = new Set(['resources/manifest.ts', 'resources/resource.ts'])

/**
 * Each import by a file of one module (resources/<a>/) of another module's file other than its
 * public.ts, or of a file of resources/ itself other than the contract, as "file -> import".
 */
export function moduleBoundaryViolations(graph: Map<string, string[]>): string[] {
  const violations: string[] = []
  for (const [file, targets] of graph) {
    const from = MODULE_FILE.exec(file)?.[1]
    if (from === undefined) continue
    for (const target of new Set(targets)) {
      if (!target.startsWith('resources/') || RESOURCE_CONTRACT.has(target)) continue
      const into = MODULE_FILE.exec(target)
      if (into !== null && (into[1] === from || into[2] === 'public.ts')) continue
      violations.push(`${file} -> ${target}`)
    }
  }
  return violations.sort()
}

/** The modules each module imports (resources/<a>/ importing anything of resources/<b>/), by name, sorted. */
export function moduleGraph(graph: Map<string, string[]>): Map<string, string[]> {
  const modules = new Map<string, Set<string>>()
  for (const [file, targets] of graph) {
    const from = MODULE_FILE.exec(file)?.[1]
    if (from === undefined) continue
    const imported = modules.get(from) ?? new Set<string>()
    modules.set(from, imported)
    for (const target of targets) {
      const into = MODULE_FILE.exec(target)?.[1]
      if (into !== undefined && into !== from) imported.add(into)
    }
  }
  return new Map([...modules].map(([name, imported]) => [name, [...imported].sort()]))
}

/** The money core: amounts, the ledger, the outbox and domain events, and the modules that move money. */
const MONEY_CORE = /^(?:ledger|events)\/|^resources\/(?:transfers|drains|payment-intents|wallets|balances)\//

/** A money-core module's HTTP side (its routes and the request reading they share), which may import HTTP code. */
const MONEY_CORE_ROUTES = /^resources\/[^/]+\/(?:routes|requests)\.ts$/

/**
 * What the money core may not import: the hosted pages and what they sell (checkout, invoices,
 * payment links), the list of modules and their registration (it reaches its subscribers through
 * the Transaction's domain events), the app, and, outside its routes, the HTTP side.
 */
const NOT_FOR_MONEY_CORE = /^resources\/(?:checkout|invoices|payment-links)\/|^resources\/(?:index|register)\.ts$|^app\.ts$/
const HTTP = /^http\//

/** Each import of the money core that reaches the features built on it or, outside its routes, HTTP, as "file -> import". */
export function moneyCoreViolations(graph: Map<string, string[]>): string[] {
  const violations: string[] = []
  for (const [file, targets] of graph) {
    if (!MONEY_CORE.test(file)) continue
    for (const target of targets) {
      if (NOT_FOR_MONEY_CORE.test(target) || (HTTP.test(target) && !MONEY_CORE_ROUTES.test(file))) violations.push(`${file} -> ${target}`)
    }
  }
  return violations.sort()
}

/**
 * Domain code, which throws domain errors (src/errors.ts) and knows nothing of HTTP: the domain
 * errors themselves, the ledger, the outbox, storage, delivery, the scheduler, keys, and every
 * file of a module but its HTTP side. A module's HTTP side: index.ts and manifest.ts (how it is
 * registered), routes.ts and *-routes.ts, schemas.ts and *-schemas.ts (the API's shapes),
 * requests.ts, encodings.ts and form-upload.ts (reading a request's body), pages.ts and html.ts
 * (pages served to a browser).
 */
const DOMAIN = /^errors\.ts$|^(?:ledger|events|db|apps|delivery|scheduler|keys)\/|^resources\/[^/]+\/(?!(?:index|manifest|(?:[\w-]+-)?routes|(?:[\w-]+-)?schemas|requests|encodings|form-upload|pages|html)\.ts$)[^/]+$/

/** Each import of domain code that reaches into src/http/ (HTTP errors, the error handler, request readers), as "file -> import". */
export function domainHttpViolations(graph: Map<string, string[]>): string[] {
  const violations: string[] = []
  for (const [file, targets] of graph) {
    if (!DOMAIN.test(file)) continue
    for (const target of targets) if (target.startsWith('http/')) violations.push(`${file} -> ${target}`)
  }
  return violations.sort()
}
