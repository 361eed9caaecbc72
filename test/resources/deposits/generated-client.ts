import { describe, expect, it } from 'vitest'
import { A_UUID, call, key, server } from '../../openapi/generated-client.js'
import { insertDeposit } from './fixtures.js'

export function generatedClientCases(): void {
  describe('deposits', () => {
    it('depositControllerFindAll: GET /deposits', async () => {
      const { data, response } = await call('depositControllerFindAll', { query: { status: 'held', take: 5 } })
      expect(response.status).toBe(200)
      expect(data).toEqual({ data: [], total: 0, skip: 0, take: 5 })
    })

    it('depositControllerFindOne: GET /deposits/{id}', async () => {
      const deposit = await insertDeposit(server, key.appId)
      const { data, response } = await call('depositControllerFindOne', { path: { id: deposit.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ id: A_UUID, chain: 'base', currency: 'usdc', amount: '25.000000', status: 'pending', confirmations: 1, livemode: true, credited_to: null })
    })
  })
}
