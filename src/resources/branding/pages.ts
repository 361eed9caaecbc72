import type { FastifyPluginAsync } from 'fastify'
import type { ImageStore } from '../products/public.js'
import { LOGO_PATH_PREFIX } from './brand.js'
import { BrandingRepository } from './repository.js'

const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The logos the hosted pages show, served by this server (the pages make no third-party request). */
export const brandingPages: FastifyPluginAsync<{ images: ImageStore }> = async (app, options) => {
  const branding = new BrandingRepository(app.db)
  app.get<{ Params: { imageId: string } }>(`${LOGO_PATH_PREFIX}:imageId`, { schema: { hide: true } }, async (request, reply) => {
    const imageId = request.params.imageId.toLowerCase()
    const row = KEY.test(imageId) ? await branding.findByLogo(imageId) : undefined
    const stored = row?.logo_type === null || row?.logo_type === undefined ? undefined : await options.images.read(imageId)
    if (row?.logo_type === null || row?.logo_type === undefined || stored === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not found')
    // A logo's id names its bytes for good (a new logo gets a new id).
    return reply
      .headers({ etag: `"${imageId}"`, 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox" })
      .type(row.logo_type)
      .header('content-length', stored.size)
      .send(stored.bytes)
  })
}
