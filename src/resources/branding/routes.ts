import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { errorResponses } from '../../schemas/common.js'
import { operation } from '../manifest.js'
import { IMAGE_TYPES, type ImageStore, MAX_IMAGE_BYTES } from '../products/public.js'
import { type Brand, findBrand } from './brand.js'
import { checkedBrandingChanges, storeLogo } from './changes.js'
import { brandingManifest } from './manifest.js'
import { BrandingRepository } from './repository.js'
import { type Branding, BrandingSchema, UpdateBrandingBody } from './schemas.js'

export interface BrandingOptions {
  /** where the logo is kept: the store of product images (PRODUCT_IMAGES_DIR) */
  images: ImageStore
  publicUrl: () => string
}

function toBranding(brand: Brand, origin: string): Branding {
  return { display_name: brand.display_name, brand_color: brand.brand_color, support_email: brand.support_email, logo_url: brand.logo_path === null ? null : `${origin}${brand.logo_path}` }
}

export const brandingRoutes: FastifyPluginAsyncTypebox<BrandingOptions> = async (app, options) => {
  // The logo comes as the body itself; its type is decided from its first bytes, never this header.
  app.addContentTypeParser([...IMAGE_TYPES, 'application/octet-stream'], { parseAs: 'buffer', bodyLimit: MAX_IMAGE_BYTES }, (_request, body, done) => done(null, body))

  app.route({
    ...operation(brandingManifest, 'brandingControllerGet'),
    schema: { tags: ['branding'], summary: 'The merchant the hosted pages show', response: { 200: BrandingSchema, ...errorResponses(401, 403, 429) } },
    handler: async (request) => toBranding(await findBrand(app.db, callerOf(request).appId), options.publicUrl()),
  })

  app.route({
    ...operation(brandingManifest, 'brandingControllerUpdate'),
    schema: {
      tags: ['branding'],
      summary: 'Set the display name, brand colour and support email the hosted pages show',
      body: UpdateBrandingBody,
      response: { 200: BrandingSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const changes = checkedBrandingChanges(request.body)
      await app.transact((tx) => new BrandingRepository(tx.db).change(appId, changes))
      return toBranding(await findBrand(app.db, appId), options.publicUrl())
    },
  })

  app.route({
    ...operation(brandingManifest, 'brandingControllerUploadLogo'),
    schema: {
      tags: ['branding'],
      summary: 'Set the logo the hosted pages show',
      description: "The image file as the body (JPEG, PNG or WebP, at most 5 MB): checked as a product's image is, by its first bytes.",
      body: { content: Object.fromEntries([...IMAGE_TYPES, 'application/octet-stream'].map((type) => [type, { schema: { description: 'the image file', format: 'binary' } }])) },
      response: { 200: BrandingSchema, ...errorResponses(400, 401, 403, 413, 415, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const body: unknown = request.body
      const logo = await storeLogo(options.images, Buffer.isBuffer(body) ? body : Buffer.alloc(0))
      const previous = await app.transact(async (tx) => {
        const repository = new BrandingRepository(tx.db)
        const before = (await repository.find(appId))?.logo_image_id ?? null
        await repository.change(appId, { logo_image_id: logo.key, logo_type: logo.type })
        return before
      })
      if (previous !== null) await removeQuietly(options.images, previous, request.log)
      return toBranding(await findBrand(app.db, appId), options.publicUrl())
    },
  })

  app.route({
    ...operation(brandingManifest, 'brandingControllerRemoveLogo'),
    schema: { tags: ['branding'], summary: 'Remove the logo: the pages show the name’s initial', response: { 200: BrandingSchema, ...errorResponses(401, 403, 429) } },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const previous = await app.transact(async (tx) => {
        const repository = new BrandingRepository(tx.db)
        const before = (await repository.find(appId))?.logo_image_id ?? null
        if (before !== null) await repository.change(appId, { logo_image_id: null, logo_type: null })
        return before
      })
      if (previous !== null) await removeQuietly(options.images, previous, request.log)
      return toBranding(await findBrand(app.db, appId), options.publicUrl())
    },
  })
}

/** A replaced logo's file: a failure leaves an unreferenced file, logged, and the change stands. */
async function removeQuietly(store: ImageStore, key: string, log: { warn: (object: object, message: string) => void }): Promise<void> {
  try {
    await store.remove([key])
  } catch (error) {
    log.warn({ err: error, image: key }, 'a replaced logo could not be removed from the store')
  }
}
