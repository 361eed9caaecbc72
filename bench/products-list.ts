/**
 * GET /products's database work (ProductsRepository.list: a page and its total, read on one
 * snapshot) with 10,000 products in the table and again with 1,000,000, the benchmarked
 * application owning 1,000 of them both times: the others belong to 1,000 other applications, as
 * a shared server's would. The list should cost the same at both sizes.
 *
 *   npx tsx bench/products-list.ts                  SQLite (a temporary file)
 *   npx tsx bench/products-list.ts postgres         PostgreSQL (a new database on TEST_DATABASE_URL's server)
 *
 * Prints, per query, the median time of 300 calls after 50 warm-up calls, at each size, and the ratio.
 */
import { parseDatabaseUrl } from '../src/config.js'
import { openDatabase } from '../src/modules/database.js'
import { ProductsRepository, type ProductFilter } from '../src/resources/products/repository.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../test/backend.js'

const OWN = 1_000
const OTHER_APPS = 1_000
const SIZES = [10_000, 1_000_000] as const
const WARM_UP = 50
const RUNS = 300
const APP = '0000000a-0000-4000-8000-000000000001'

const QUERIES: Record<string, ProductFilter> = {
  'first page (take 10)': { take: 10 },
  'take 100': { take: 100 },
  'skip 900, take 100': { skip: 900, take: 100 },
  'name contains "mug"': { name: 'mug', take: 10 },
  'status and currency': { status: 'INACTIVE', currency: 'EUR', take: 10 },
}

/** Inserts products `from` … `to - 1`: APP owns every 10th of the first 10,000 (OWN), the rest spread over OTHER_APPS others. */
async function seed(database: FreshDatabase, postgres: boolean, from: number, to: number): Promise<void> {
  const hex = (expr: string) => (postgres ? `lpad(to_hex(${expr}), 12, '0')` : `printf('%012x', ${expr})`)
  const ts = (expr: string) =>
    postgres
      ? `to_char(timestamp '2024-01-01 00:00:00' + (${expr}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : `strftime('%Y-%m-%dT%H:%M:%fZ', 1704067200 + (${expr}), 'unixepoch')`
  const appOf = `case when i < ${SIZES[0]} and i % ${SIZES[0] / OWN} = 0 then '${APP}' else '0000000b-0000-4000-8000-' || ${hex(`i % ${OTHER_APPS}`)} end`
  const columns = {
    id: `'0000000c-0000-4000-8000-' || ${hex('i')}`,
    app_id: appOf,
    name: `case when i % 7 = 0 then 'Coffee mug ' || i else 'Plate ' || i end`,
    description: 'null',
    price: "'1999'",
    currency: `case when i % 3 = 0 then 'EUR' else 'USD' end`,
    type: 'null',
    product_type: 'null',
    weight: 'null',
    unit: 'null',
    quantity: 'null',
    stock_count: 'null',
    status: `case when i % 5 = 0 then 'INACTIVE' else 'ACTIVE' end`,
    images: "'[]'",
    created_at: ts('i'),
    updated_at: ts('i'),
  }
  const names = Object.keys(columns).join(', ')
  const values = Object.values(columns).join(', ')
  const statement = postgres
    ? `insert into products (${names}) select ${values} from generate_series(${from}, ${to - 1}) as s(i)`
    : `with recursive s(i) as (select ${from} union all select i + 1 from s where i < ${to - 1}) insert into products (${names}) select ${values} from s`
  // Through a connection of its own: the server pool's statement timeout would stop a million-row INSERT.
  await database.query(statement)
  await database.query(postgres ? 'analyze products' : 'analyze')
}

async function medianMicros(work: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARM_UP; i++) await work()
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now()
    await work()
    times.push((performance.now() - started) * 1000)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)] ?? Number.NaN
}

async function main(): Promise<void> {
  const backend = process.argv[2] === 'postgres' ? 'postgres' : 'sqlite'
  const fresh = await freshDatabase(backend)
  const db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 2))
  const products = new ProductsRepository(db)
  const results = new Map<string, number[]>()
  let seeded = 0
  try {
    for (const size of SIZES) {
      const started = performance.now()
      await seed(fresh, backend === 'postgres', seeded, size)
      seeded = size
      process.stdout.write(`${backend}: ${size.toLocaleString('en')} products seeded (${((performance.now() - started) / 1000).toFixed(1)} s)\n`)
      const total = (await products.list(APP, { take: 1 })).total
      if (total !== OWN) throw new Error(`the application owns ${total} products, not ${OWN}`)
      for (const [name, filter] of Object.entries(QUERIES)) {
        results.set(name, [...(results.get(name) ?? []), await medianMicros(() => products.list(APP, filter))])
      }
    }
  } finally {
    await db.destroy()
    await dropFreshDatabases()
  }
  process.stdout.write(`\n| query (${backend}) | ${SIZES.map((size) => `${size.toLocaleString('en')} rows`).join(' | ')} | 1M / 10k |\n|---|---|---|---|\n`)
  for (const [name, [small, large]] of results) {
    process.stdout.write(`| ${name} | ${small?.toFixed(0)} µs | ${large?.toFixed(0)} µs | ${((large ?? 0) / (small ?? 1)).toFixed(2)} |\n`)
  }
}

await main()
