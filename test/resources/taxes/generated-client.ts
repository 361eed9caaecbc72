import { describe, expect, it } from 'vitest'
import { A_UUID, A_VALID_DATE, call, key, newTax, server } from '../../openapi/generated-client.js'

const TAX_SHAPE = { id: A_UUID, name: expect.any(String), percentage: expect.any(Number), active: expect.any(Boolean), created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

export function generatedClientCases(): void {
  describe('taxes', () => {
    it('taxControllerCreate: POST /taxes', async () => {
      const { data, response } = await call('taxControllerCreate', { body: { name: 'Sales tax', description: 'state', percentage: 7.25, active: true, appIds: [] } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ ...TAX_SHAPE, name: 'Sales tax', description: 'state', percentage: 7.25, active: true })
    })

    it('taxControllerFindAll: GET /taxes', async () => {
      const tax = await newTax()
      const { data, response } = await call('taxControllerFindAll', { query: { skip: 0, take: 100 } })
      expect(response.status).toBe(200)
      expect(data).toEqual(expect.arrayContaining([expect.objectContaining({ ...TAX_SHAPE, id: tax.id })]))
    })

    it('taxControllerFindOne: GET /taxes/{id}', async () => {
      const tax = await newTax()
      const { data, response } = await call('taxControllerFindOne', { path: { id: tax.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...TAX_SHAPE, id: tax.id, percentage: 20 })
    })

    it('taxControllerUpdate: PUT /taxes/{id}', async () => {
      const tax = await newTax()
      const { data, response } = await call('taxControllerUpdate', { path: { id: tax.id }, body: { percentage: 21.5, active: false } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...TAX_SHAPE, id: tax.id, percentage: 21.5, active: false })
    })

    it('taxControllerRemove: DELETE /taxes/{id}', async () => {
      const tax = await newTax()
      const { data, response } = await call('taxControllerRemove', { path: { id: tax.id } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...TAX_SHAPE, id: tax.id })
      expect((await server.request('GET', `/api/v0/taxes/${tax.id}`, { key })).status).toBe(404)
    })

    it('taxControllerUpdateWithoutId: PUT /taxes is always 400', async () => {
      const { error, response } = await call('taxControllerUpdateWithoutId')
      expect(response.status).toBe(400)
      expect(error).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: 'Tax ID is required in the URL path. Use PUT /api/v0/taxes/{id} to update a specific tax.',
      })
    })

    it('taxControllerDeleteWithoutId: DELETE /taxes is always 400', async () => {
      const { error, response } = await call('taxControllerDeleteWithoutId')
      expect(response.status).toBe(400)
      expect(error).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: 'Tax ID is required in the URL path. Use DELETE /api/v0/taxes/{id} to delete a specific tax.',
      })
    })
  })
}
