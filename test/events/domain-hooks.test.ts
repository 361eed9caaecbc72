import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SignalSink } from '../../src/db/unit-of-work.js'
import type { FundsArrived } from '../../src/events/domain-events.js'
import { DomainHooks, type DomainSubscriptions, type HookSettings } from '../../src/events/hooks.js'
import { ExchangeRates } from '../../src/ledger/rates.js'
import { type Transaction, transactOn } from '../../src/events/transact.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

const noSignals: SignalSink = { signalStatements: () => undefined, committed: () => undefined }
const settings: HookSettings = { publicUrl: () => 'https://pay.example', money: { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 0, achDelayMs: 0 }, now: Date.now } }

let server: TestServer
let key: TestKey

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})

afterAll(async () => {
  await server.close()
})

function arrived(): FundsArrived {
  return { type: 'transfer.funds_arrived', family: 'payment_intent', transferId: '00000000-0000-4000-8000-000000000001', appId: key.appId, environment: 'sandbox', amount: 5n, at: '2026-01-01T00:00:00.000Z' }
}

async function eventsOf(appId: string): Promise<number[]> {
  const rows = await server.app.db.selectFrom('events').select('payload').where('app_id', '=', appId).execute()
  return rows.map((row) => (JSON.parse(row.payload) as { data: { n: number } }).data.n).sort()
}

describe('domain events: DomainHooks and Transaction.publish', () => {
  it("runs each module's handler of the event, in the modules' order, on the publisher's transaction, before publish returns", async () => {
    const calls: string[] = []
    let handlerTx: Transaction | undefined
    const first: DomainSubscriptions = {
      'transfer.funds_arrived': async (tx, event, given) => {
        handlerTx = tx
        calls.push(`first ${event.transferId} ${event.amount} ${given.publicUrl()}`)
        await tx.events.emit(event.appId, 'tax.created', { n: 2 })
      },
    }
    const second: DomainSubscriptions = {
      'transfer.funds_arrived': async () => {
        calls.push('second')
      },
    }
    const transact = transactOn(server.app.db, noSignals, new DomainHooks([first, {}, second], settings))
    const appKey = await server.createKey()
    await transact(async (tx) => {
      await tx.events.emit(appKey.appId, 'tax.created', { n: 1 })
      await tx.publish({ ...arrived(), appId: appKey.appId })
      calls.push('published')
      expect(handlerTx).toBe(tx)
    })
    expect(calls).toEqual(['first 00000000-0000-4000-8000-000000000001 5 https://pay.example', 'second', 'published'])
    expect(await eventsOf(appKey.appId)).toEqual([1, 2])
  })

  it("a handler's error is the publisher's: the whole change, the handler's writes included, rolls back", async () => {
    const refusing: DomainSubscriptions = {
      'transfer.funds_arrived': async (tx, event) => {
        await tx.events.emit(event.appId, 'tax.created', { n: 2 })
        throw new Error('refused')
      },
    }
    const transact = transactOn(server.app.db, noSignals, new DomainHooks([refusing], settings))
    const appKey = await server.createKey()
    await expect(
      transact(async (tx) => {
        await tx.events.emit(appKey.appId, 'tax.created', { n: 1 })
        await tx.publish({ ...arrived(), appId: appKey.appId })
      }),
    ).rejects.toThrow('refused')
    expect(await eventsOf(appKey.appId)).toEqual([])
  })

  it('an event no module subscribes to changes nothing', async () => {
    const transact = transactOn(server.app.db, noSignals, new DomainHooks([{}, {}], settings))
    await transact((tx) => tx.publish(arrived()))
    expect(await eventsOf(key.appId)).toEqual([])
  })
})
