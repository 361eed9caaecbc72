// vitest: sqlite project only — the sender against a receiver on loopback, no backend.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { AttemptAbort, WebhookSender } from '../../src/delivery/sender.js'
import { type Receiver, startReceiver } from '../receiver.js'

// The sender resolves and vets a host name before it builds the request.
let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
})

const never = () => new Promise<never>(() => undefined)
const loopback = async () => [{ address: '127.0.0.1', family: 4 as const }]
const port = () => new URL(receiver.url('/')).port
const send = (sender: WebhookSender, url: string, extra: Partial<Parameters<WebhookSender['send']>[0]> = {}) =>
  sender.send({ url, headers: {}, body: '{}', timeoutMs: 100, abort: new AttemptAbort(), ...extra })

it('a host that never resolves fails at the attempt timeout, saying it was resolving', async () => {
  const sender = new WebhookSender({ resolveHost: never, allowLoopback: true })
  expect(await send(sender, 'http://never.test/')).toEqual({ kind: 'error', message: 'timed out after 100 ms resolving never.test' })
  sender.close()
})

it('an attempt aborted while its host resolves ends at once as aborted', async () => {
  const sender = new WebhookSender({ resolveHost: never, allowLoopback: true })
  const controller = new AttemptAbort()
  const result = send(sender, 'http://never.test/', { timeoutMs: 10_000, abort: controller })
  controller.abort()
  expect(await result).toEqual({ kind: 'error', message: 'aborted' })
  sender.close()
})

it('an attempt aborted while its request waits for the answer ends at once as aborted, and its connection is closed', async () => {
  const sender = new WebhookSender({ resolveHost: loopback, allowLoopback: true })
  receiver.setAnswer((arrival) => (arrival.path === '/hang-abort' ? 'hang' : { status: 200, body: 'ok' }))
  const controller = new AttemptAbort()
  const result = send(sender, `http://127.0.0.1:${port()}/hang-abort`, { timeoutMs: 10_000, abort: controller })
  const [arrival] = await receiver.waitFor(1, { path: '/hang-abort' })
  const abortedAt = performance.now()
  controller.abort()
  expect(await result).toEqual({ kind: 'error', message: 'aborted' })
  expect(performance.now() - abortedAt).toBeLessThan(1_000)
  for (let i = 0; i < 100 && arrival?.closedAt === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  expect(arrival?.aborted).toBe(true)
  // Aborting again, or after the end, changes nothing.
  controller.abort()
  receiver.setAnswer(() => ({ status: 200, body: 'ok' }))
  sender.close()
})

it('an attempt aborted before it is sent is not sent', async () => {
  const sender = new WebhookSender({ resolveHost: loopback, allowLoopback: true })
  const controller = new AttemptAbort()
  controller.abort()
  const before = receiver.arrivals.length
  expect(await send(sender, `http://127.0.0.1:${port()}/never-sent`, { abort: controller })).toEqual({ kind: 'error', message: 'aborted' })
  expect(receiver.arrivals.length).toBe(before)
  sender.close()
})

it('the lookup hooks: told when the lookup starts; refused admission abandons the attempt before connecting, admitted it goes out', async () => {
  const sender = new WebhookSender({ resolveHost: loopback, allowLoopback: true })
  const seen: string[] = []
  const connections = receiver.connections()
  const refused = await send(sender, `http://hooks.test:${port()}/refused`, {
    timeoutMs: 2_000,
    lookup: { looking: () => void seen.push('looking'), admit: async () => (seen.push('admit'), false) },
  })
  expect(refused).toEqual({ kind: 'error', message: 'abandoned before connecting' })
  expect(receiver.connections()).toBe(connections)
  const admitted = await send(sender, `http://hooks.test:${port()}/admitted`, { timeoutMs: 2_000, lookup: { looking: () => undefined, admit: async () => true } })
  expect(admitted).toMatchObject({ kind: 'response', status: 200 })
  expect(seen).toEqual(['looking', 'admit'])
  sender.close()
})
