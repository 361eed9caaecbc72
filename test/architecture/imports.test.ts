// vitest: sqlite project only — reads the source files, no backend.
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { domainHttpViolations, importCircles, importGraph, moduleBoundaryViolations, moduleGraph, moneyCoreViolations, repositoryLayerViolations } from './imports.js'

const SRC = fileURLToPath(new URL('../../src', import.meta.url))

describe('the import graph of src/', () => {
  it('has no import circle, type imports included', () => {
    expect(importCircles(importGraph(SRC))).toEqual([])
  })

  it('the checker sees a circle where there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ])
    expect(importCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']])
  })

  it('no repository imports route, API schema, auth, plugin, HTTP or delivery code', () => {
    const graph = importGraph(SRC)
    // The rule would pass vacuously if the repositories were not where it looks for them.
    expect(graph.has('events/deliveries-repository.ts')).toBe(true)
    expect(graph.has('apps/repository.ts')).toBe(true)
    expect(graph.has('resources/customers/repository.ts')).toBe(true)
    expect(graph.has('resources/webhooks/delivery-log-repository.ts')).toBe(true)
    expect(repositoryLayerViolations(graph)).toEqual([])
  })

  it('the checker sees a repository reaching past the storage layer', () => {
    const graph = new Map([
      ['resources/foo/repository.ts', ['resources/foo/schemas.ts', 'db/errors.ts', 'resources/foo/objects.ts']],
      ['resources/foo/delivery-log-repository.ts', ['delivery/retry.ts']],
      ['db/repositories/bar.ts', ['auth/credentials.ts', 'db/time.ts', 'errors.ts', 'http/api-error.ts']],
      ['db/sqlite/open.ts', ['schemas/common.ts']],
      // Not repositories: they may import anything.
      ['resources/foo/routes.ts', ['auth/authenticate.ts', 'resources/foo/schemas.ts']],
      ['resources/foo/objects.ts', ['resources/foo/schemas.ts']],
    ])
    expect(repositoryLayerViolations(graph)).toEqual([
      'db/repositories/bar.ts -> auth/credentials.ts',
      'db/repositories/bar.ts -> http/api-error.ts',
      'db/sqlite/open.ts -> schemas/common.ts',
      'resources/foo/delivery-log-repository.ts -> delivery/retry.ts',
      'resources/foo/repository.ts -> resources/foo/objects.ts',
      'resources/foo/repository.ts -> resources/foo/schemas.ts',
    ])
  })

  it("a module imports only another module's public.ts, and of resources/ only manifest.ts and resource.ts", () => {
    const graph = importGraph(SRC)
    // The rule would pass vacuously if the modules were not where it looks for them.
    expect(graph.get('resources/drains/lifecycle.ts')).toContain('resources/wallets/public.ts')
    expect(moduleBoundaryViolations(graph)).toEqual([])
  })

  it('no two modules import each other, through however many others: what crosses back goes through a domain event', () => {
    const modules = moduleGraph(importGraph(SRC))
    // The rule would pass vacuously if the modules' imports were not where it looks for them.
    expect(modules.get('checkout')).toContain('invoices')
    expect(importCircles(modules)).toEqual([])
  })

  it('the checker sees modules that import each other', () => {
    const graph = new Map([
      ['resources/foo/settlement.ts', ['resources/bar/public.ts', 'resources/foo/repository.ts']],
      ['resources/bar/index.ts', ['resources/baz/public.ts', 'resources/manifest.ts']],
      ['resources/baz/schemas.ts', ['resources/foo/public.ts', 'schemas/common.ts']],
      ['resources/qux/routes.ts', ['resources/foo/public.ts']],
      ['resources/index.ts', ['resources/foo/index.ts', 'resources/qux/index.ts']],
    ])
    const modules = moduleGraph(graph)
    expect(modules).toEqual(
      new Map([
        ['foo', ['bar']],
        ['bar', ['baz']],
        ['baz', ['foo']],
        ['qux', ['foo']],
      ]),
    )
    expect(importCircles(modules)).toEqual([['bar', 'baz', 'foo', 'bar']])
  })

  it('the checker sees a module reaching into another', () => {
    const graph = new Map([
      ['resources/foo/routes.ts', ['resources/foo/repository.ts', 'resources/bar/public.ts', 'resources/bar/repository.ts', 'resources/manifest.ts', 'resources/resource.ts']],
      ['resources/foo/lifecycle.ts', ['resources/bar/lifecycle.ts', 'resources/bar/lifecycle.ts', 'resources/register.ts', 'ledger/rates.ts']],
      ['resources/bar/public.ts', ['resources/bar/repository.ts', 'resources/baz/schemas.ts']],
      ['resources/baz/index.ts', ['resources/bar/schemas.ts']],
      // Not modules: they may import any module's files.
      ['resources/index.ts', ['resources/foo/index.ts']],
      ['scheduler/money-scheduler.ts', ['resources/foo/lifecycle.ts']],
    ])
    expect(moduleBoundaryViolations(graph)).toEqual([
      'resources/bar/public.ts -> resources/baz/schemas.ts',
      'resources/baz/index.ts -> resources/bar/schemas.ts',
      'resources/foo/lifecycle.ts -> resources/bar/lifecycle.ts',
      'resources/foo/lifecycle.ts -> resources/register.ts',
      'resources/foo/routes.ts -> resources/bar/repository.ts',
    ])
  })

  it('the money core (ledger/, events/, transfers, drains, payment intents, wallets, balances) imports nothing of checkout, invoices, payment links, RESOURCES, the app, or HTTP outside its routes.ts and requests.ts', () => {
    const graph = importGraph(SRC)
    // The rule would pass vacuously if the money core were not where it looks for it.
    expect(graph.has('resources/transfers/lifecycle.ts')).toBe(true)
    expect(graph.has('resources/drains/lifecycle.ts')).toBe(true)
    expect(graph.has('events/transact.ts')).toBe(true)
    expect(graph.has('ledger/ledger.ts')).toBe(true)
    expect(moneyCoreViolations(graph)).toEqual([])
  })

  it('the checker sees the money core reaching the features built on it', () => {
    const graph = new Map([
      ['resources/transfers/lifecycle.ts', ['resources/checkout/settlement.ts', 'resources/drains/lifecycle.ts', 'http/amount-field.ts']],
      ['resources/transfers/routes.ts', ['http/amount-field.ts', 'resources/invoices/public.ts']],
      ['resources/transfers/requests.ts', ['http/json-number.ts']],
      ['resources/wallets/repository.ts', ['resources/payment-links/repository.ts']],
      ['ledger/ledger.ts', ['resources/index.ts']],
      ['events/transact.ts', ['app.ts', 'db/unit-of-work.ts']],
      // Not the money core: it may import them.
      ['resources/checkout/settlement.ts', ['resources/invoices/public.ts', 'resources/transfers/public.ts']],
      ['resources/invoices/routes.ts', ['http/amount-field.ts']],
    ])
    expect(moneyCoreViolations(graph)).toEqual([
      'events/transact.ts -> app.ts',
      'ledger/ledger.ts -> resources/index.ts',
      'resources/transfers/lifecycle.ts -> http/amount-field.ts',
      'resources/transfers/lifecycle.ts -> resources/checkout/settlement.ts',
      'resources/transfers/routes.ts -> resources/invoices/public.ts',
      'resources/wallets/repository.ts -> resources/payment-links/repository.ts',
    ])
  })

  it('no domain code (ledger, outbox, storage, delivery, a module but its HTTP side) imports src/http/', () => {
    const graph = importGraph(SRC)
    // The rule would pass vacuously if the domain files were not where it looks for them.
    for (const file of ['ledger/ledger.ts', 'resources/payment-links/rules.ts', 'resources/transfers/lifecycle.ts', 'resources/checkout/charges.ts', 'resources/invoices/money.ts']) {
      expect(graph.has(file)).toBe(true)
    }
    expect(domainHttpViolations(graph)).toEqual([])
  })

  it('the checker sees domain code reaching into src/http/', () => {
    const graph = new Map([
      ['resources/foo/rules.ts', ['http/api-error.ts', 'errors.ts']],
      ['resources/foo/lifecycle.ts', ['http/error-handler.ts']],
      ['resources/foo/billing-repository.ts', ['http/amount-field.ts']],
      ['ledger/ledger.ts', ['http/json-number.ts']],
      ['events/transact.ts', ['http/fastify-decorations.ts']],
      ['errors.ts', ['http/api-error.ts']],
      // The HTTP side: it may import src/http/.
      ['resources/foo/routes.ts', ['http/api-error.ts']],
      ['resources/foo/delivery-routes.ts', ['http/api-error.ts']],
      ['resources/foo/requests.ts', ['http/amount-field.ts']],
      ['resources/foo/pages.ts', ['http/error-handler.ts']],
      ['resources/foo/index.ts', ['http/api-error.ts']],
      ['resources/index.ts', ['http/api-error.ts']],
      ['auth/authenticate.ts', ['http/api-error.ts']],
      ['app.ts', ['http/error-handler.ts']],
    ])
    expect(domainHttpViolations(graph)).toEqual([
      'errors.ts -> http/api-error.ts',
      'events/transact.ts -> http/fastify-decorations.ts',
      'ledger/ledger.ts -> http/json-number.ts',
      'resources/foo/billing-repository.ts -> http/amount-field.ts',
      'resources/foo/lifecycle.ts -> http/error-handler.ts',
      'resources/foo/rules.ts -> http/api-error.ts',
    ])
  })
})
