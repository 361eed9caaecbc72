import { describe, expect, it } from 'vitest'
import { call, server } from '../../openapi/generated-client.js'

const BRANDING_SHAPE = { display_name: expect.any(String), brand_color: expect.stringMatching(/^#[0-9a-f]{6}$/) }
/** The first bytes of a PNG are what the logo is judged by. */
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)])

export function generatedClientCases(): void {
  describe('branding', () => {
    it('brandingControllerUpdate: PUT /branding', async () => {
      const { data, response } = await call('brandingControllerUpdate', { body: { display_name: 'Acme Widgets', brand_color: '#0f766e', support_email: 'billing@acme.example' } })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ display_name: 'Acme Widgets', brand_color: '#0f766e', support_email: 'billing@acme.example' })
    })

    it('brandingControllerGet: GET /branding', async () => {
      const { data, response } = await call('brandingControllerGet')
      expect(response.status).toBe(200)
      expect(data).toMatchObject(BRANDING_SHAPE)
    })

    it('brandingControllerUploadLogo: PUT /branding/logo, the image file as the body', async () => {
      const { data, response } = await call('brandingControllerUploadLogo', { body: new Blob([PNG], { type: 'image/png' }), headers: { 'content-type': 'image/png' }, bodySerializer: (body) => body })
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...BRANDING_SHAPE, logo_url: expect.stringMatching(new RegExp(`^${server.baseUrl}/brand-logos/`)) })
    })

    it('brandingControllerRemoveLogo: DELETE /branding/logo', async () => {
      const { data, response } = await call('brandingControllerRemoveLogo')
      expect(response.status).toBe(200)
      expect(data).toMatchObject({ ...BRANDING_SHAPE, logo_url: null })
    })
  })
}
