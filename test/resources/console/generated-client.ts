import { describe, expect, it } from 'vitest'
import { call, server } from '../../openapi/generated-client.js'

export function generatedClientCases(): void {
  describe('console', () => {
    it('consoleControllerCreateLink: POST /console/links', async () => {
      const { data, response } = await call('consoleControllerCreateLink', { body: { role: 'admin', ttl: '15m' } })
      expect(response.status).toBe(201)
      expect(data).toMatchObject({ url: expect.stringMatching(new RegExp(`^${server.baseUrl}/console/open/`)), role: 'admin', expires_at: expect.any(Date) })
    })
  })
}
