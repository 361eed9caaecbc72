import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest, preParsingAsyncHookHandler } from 'fastify'
import { callerOf } from '../../auth/authenticate.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { MAX_IMAGES, type StagedImage } from './form-upload.js'
import type { ImageStore } from './image-store.js'
import { IMAGE_TYPES } from './image-type.js'
import { formatPrice, parsePrice, PriceError, type ProductCurrency, priceText } from './price.js'
import { errorResponses, namesAField } from '../../schemas/common.js'
import { allowImages, keepStagedImages, registerProductEncodings, stagedImagesOf } from './encodings.js'
import { droppedUploads, noRoomFor, resolveImages, TOO_MANY_IMAGES } from './images.js'
import { toProduct } from './objects.js'
import { imagesOf, isUploaded, type NewProduct, type ProductChanges, type ProductRow, ProductsRepository } from './repository.js'
import {
  type AddImagesBody,
  AddImagesContent,
  type CreateProductBody,
  CreateProductContent,
  ListProductsQuery,
  ProductImageParams,
  ProductListSchema,
  ProductParams,
  ProductSchema,
  type UpdateProductBody,
  UpdateProductContent,
} from './schemas.js'
import { operation } from '../manifest.js'
import { productsManifest } from './manifest.js'

const NOT_FOUND = 'Product not found'
const IMAGE_NOT_FOUND = 'Image not found'
const INVALID_ID = 'Invalid product ID format'
const BODY_REQUIRED = 'Request body is required: send the product as application/x-www-form-urlencoded, multipart/form-data or application/json'
const NO_FILE_SENT = 'No file was sent: send image files in the images field of a multipart/form-data body, or images as URLs'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/**
 * The validated body. The body's schema is chosen by its media type, so a request with no body
 * (and no Content-Type) reaches the route without one: refused here.
 */
function bodyOf<Body>(request: FastifyRequest, missing: string): Body {
  if (request.body === undefined || request.body === null) throw new InvalidRequest(missing)
  return request.body as Body
}

function checkedPrice(value: string | number, currency: ProductCurrency): bigint {
  try {
    return parsePrice(priceText(value), currency)
  } catch (error) {
    if (error instanceof PriceError) throw new InvalidRequest(error.message)
    throw error
  }
}

/** The product's price in another currency: the same decimal amount, if that currency can hold it. */
function repriced(row: ProductRow, currency: ProductCurrency): bigint {
  const text = formatPrice(BigInt(row.price), row.currency as ProductCurrency)
  try {
    // "10.00" USD is 10 JPY: the decimals that are zero are not the amount's.
    return parsePrice(text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text, currency)
  } catch {
    throw new InvalidRequest(`The price ${formatPrice(BigInt(row.price), row.currency as ProductCurrency)} ${row.currency} cannot be expressed in ${currency}: send price with currency`)
  }
}

/** "" clears an optional text field. */
function textOrNull(value: string | undefined): string | null | undefined {
  return value === undefined ? undefined : value === '' ? null : value
}

/** The changes an update body asks of the product as it now is. */
function changesOf(body: UpdateProductBody, current: ProductRow, staged: readonly StagedImage[]): ProductChanges {
  const currency = body.currency ?? (current.currency as ProductCurrency)
  const changes: ProductChanges = {
    name: body.name,
    description: textOrNull(body.description),
    currency: body.currency,
    type: textOrNull(body.type),
    productType: textOrNull(body.productType),
    weight: body.weight,
    unit: textOrNull(body.unit),
    quantity: body.quantity,
    stockCount: body.stockCount,
    status: body.status,
  }
  if (body.price !== undefined) changes.price = checkedPrice(body.price, currency)
  else if (body.currency !== undefined && body.currency !== current.currency) changes.price = repriced(current, currency)
  // Replaces the images: those the body names (files it uploaded, URLs, the product's own images).
  if (body.images !== undefined) changes.images = resolveImages(body.images, imagesOf(current), staged, current.id)
  return changes
}

export interface ProductRoutesOptions {
  /** where product images are stored (PRODUCT_IMAGES_DIR) */
  productImages: ImageStore
  /**
   * The origin every URL put into an answer, an event or a page starts with (PUBLIC_URL, or this
   * machine on the port it listens on), never the request's Host: a caller can't choose it.
   */
  publicUrl: () => string
}

export const productRoutes: FastifyPluginAsyncTypebox<ProductRoutesOptions> = async (app, options) => {
  const store = options.productImages
  const products = new ProductsRepository(app.db)
  registerProductEncodings(app, store)

  /** Removes images the committed change let go of; a failure leaves an unreferenced file, logged. */
  async function removeImages(request: FastifyRequest, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    try {
      await store.remove(keys)
    } catch (error) {
      request.log.warn({ err: error, images: keys }, 'images no product names any more could not be removed from the store')
    }
  }

  /**
   * Before the body is read (it may be megabytes of images): the product must be the caller's,
   * and `room(images)` says how many images the body may name.
   */
  function ownedProductFirst(room: (images: number) => { room: number; tooMany: string }): preParsingAsyncHookHandler {
    return async (request, _reply, payload) => {
      const { id } = request.params as { id: string }
      if (!UUID.test(id)) throw new InvalidRequest(INVALID_ID)
      const row = await products.find(callerOf(request).appId, id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      const allowed = room(imagesOf(row).length)
      if (allowed.room <= 0) throw new InvalidRequest(allowed.tooMany)
      allowImages(request, allowed.room, allowed.tooMany)
      return payload
    }
  }

  app.route({
    ...operation(productsManifest, 'productControllerCreate'),
    schema: {
      tags: ['products'],
      summary: 'Create a product',
      description: 'The body may be application/x-www-form-urlencoded (as the published client sends it), multipart/form-data (with image files) or application/json.',
      body: CreateProductContent,
      response: { 201: ProductSchema, ...errorResponses(400, 401, 403, 413, 415, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const body = bodyOf<CreateProductBody>(request, BODY_REQUIRED)
      const currency = body.currency ?? 'USD'
      const input: NewProduct = {
        name: body.name,
        description: textOrNull(body.description) ?? null,
        price: checkedPrice(body.price, currency),
        currency,
        type: textOrNull(body.type) ?? null,
        productType: textOrNull(body.productType) ?? null,
        weight: body.weight ?? null,
        unit: textOrNull(body.unit) ?? null,
        quantity: body.quantity ?? null,
        stockCount: body.stockCount ?? null,
        status: body.status ?? 'ACTIVE',
        images: resolveImages(body.images ?? [], [], stagedImagesOf(request), undefined),
      }
      const origin = options.publicUrl()
      const product = await app.transact(async (tx) => {
        const created = toProduct(await new ProductsRepository(tx.db).create(appId, input), origin)
        await tx.events.emit(appId, 'product.created', created)
        return created
      })
      keepStagedImages(request)
      return reply.code(201).send(product)
    },
  })

  app.route({
    ...operation(productsManifest, 'productControllerFindAll'),
    schema: {
      tags: ['products'],
      summary: "List the application's products",
      querystring: ListProductsQuery,
      response: { 200: ProductListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const { rows, total } = await products.list(callerOf(request).appId, { ...request.query, skip, take })
      const origin = options.publicUrl()
      return { data: rows.map((row) => toProduct(row, origin)), total, skip, take }
    },
  })

  app.route({
    ...operation(productsManifest, 'productControllerFindOne'),
    schema: {
      tags: ['products'],
      summary: 'Get a product',
      params: ProductParams,
      response: { 200: ProductSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const row = await products.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      return toProduct(row, options.publicUrl())
    },
  })

  app.route({
    ...operation(productsManifest, 'productControllerUpdate'),
    preParsing: ownedProductFirst(() => ({ room: MAX_IMAGES, tooMany: TOO_MANY_IMAGES })),
    schema: {
      tags: ['products'],
      summary: 'Update a product',
      description: 'Every field is optional; `images`, when given, replaces the images (files uploaded in a multipart body take their place in it).',
      params: ProductParams,
      body: UpdateProductContent,
      response: { 200: ProductSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const body = bodyOf<UpdateProductBody>(request, BODY_REQUIRED)
      const staged = stagedImagesOf(request)
      const origin = options.publicUrl()
      const { product, dropped } = await app.transact(async (tx) => {
        const repository = new ProductsRepository(tx.db)
        const current = await repository.lock(appId, request.params.id)
        if (current === undefined) throw new NotFound(NOT_FOUND)
        const row = await repository.update(appId, current.id, changesOf(body, current, staged))
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const updated = toProduct(row, origin)
        if (namesAField(body)) await tx.events.emit(appId, 'product.updated', updated)
        return { product: updated, dropped: droppedUploads(imagesOf(current), imagesOf(row)) }
      })
      keepStagedImages(request)
      await removeImages(request, dropped)
      return product
    },
  })

  app.route({
    ...operation(productsManifest, 'productControllerRemove'),
    schema: {
      tags: ['products'],
      summary: 'Delete a product and its images (permanent)',
      params: ProductParams,
      response: { 200: ProductSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      const origin = options.publicUrl()
      const { product, images } = await app.transact(async (tx) => {
        const row = await new ProductsRepository(tx.db).delete(appId, request.params.id)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const deleted = toProduct(row, origin)
        await tx.events.emit(appId, 'product.deleted', deleted)
        return { product: deleted, images: imagesOf(row).filter(isUploaded).map((image) => image.id) }
      })
      await removeImages(request, images)
      return product
    },
  })

  app.route({
    ...operation(productsManifest, 'productControllerUploadImage'),
    preParsing: ownedProductFirst((images) => ({ room: MAX_IMAGES - images, tooMany: noRoomFor(images) })),
    schema: {
      tags: ['products'],
      summary: "Add images to a product's images",
      description: 'Image files in the images field of a multipart/form-data body (JPEG, PNG or WebP, at most 5 MB each), or image URLs; a product has at most 10 images.',
      params: ProductParams,
      body: AddImagesContent,
      response: { 201: ProductSchema, ...errorResponses(400, 401, 403, 404, 413, 415, 429) },
    },
    // No body (whatever its Content-Type: the Python SDK's upload_images sends an empty
    // application/json one), or a form with no field at all (a file input left empty): no file.
    preValidation: async (request) => {
      const body: unknown = request.body
      if (body === undefined || (typeof body === 'object' && body !== null && Object.keys(body).length === 0)) throw new InvalidRequest(NO_FILE_SENT)
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const body = bodyOf<AddImagesBody>(request, NO_FILE_SENT)
      const staged = stagedImagesOf(request)
      const origin = options.publicUrl()
      const product = await app.transact(async (tx) => {
        const repository = new ProductsRepository(tx.db)
        const current = await repository.lock(appId, request.params.id)
        if (current === undefined) throw new NotFound(NOT_FOUND)
        const before = imagesOf(current)
        if (before.length + body.images.length > MAX_IMAGES) throw new InvalidRequest(noRoomFor(before.length))
        const added = resolveImages(body.images, before, staged, current.id)
        // A URL of one of the product's own images resolves to that very image object.
        added.forEach((image, index) => {
          if (before.includes(image)) throw new InvalidRequest(`images[${index}] is already one of this product's images`)
        })
        const row = await repository.update(appId, current.id, { images: [...before, ...added] })
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const updated = toProduct(row, origin)
        await tx.events.emit(appId, 'product.updated', updated)
        return updated
      })
      keepStagedImages(request)
      return reply.code(201).send(product)
    },
  })
}

/** Image bytes served to anyone with the URL: the id is random (122 bits), so the URL is the key. */
export const productImageRoutes: FastifyPluginAsyncTypebox<Pick<ProductRoutesOptions, 'productImages'>> = async (app, options) => {
  const store = options.productImages
  const products = new ProductsRepository(app.db)
  const imageContent = Object.fromEntries(IMAGE_TYPES.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]))

  app.route({
    ...operation(productsManifest, 'productControllerGetImage'),
    schema: {
      tags: ['products'],
      summary: "An uploaded image's bytes (no credentials: the URL in the product object is enough)",
      params: ProductImageParams,
      response: {
        200: { description: 'The image, as uploaded', content: imageContent },
        304: { description: 'Not modified (If-None-Match named this image)', type: 'null' },
        ...errorResponses(400, 404),
      },
    },
    handler: async (request, reply) => {
      const imageId = request.params.imageId.toLowerCase()
      const image = (await products.imagesOfProduct(request.params.id))?.filter(isUploaded).find((candidate) => candidate.id === imageId)
      if (image === undefined) throw new NotFound(IMAGE_NOT_FOUND)
      // An image id names its bytes for good: the id is the entity tag.
      const etag = `"${image.id}"`
      const headers = {
        etag,
        'cache-control': 'public, max-age=86400',
        'x-content-type-options': 'nosniff',
        'content-security-policy': "default-src 'none'; sandbox",
        'cross-origin-resource-policy': 'cross-origin',
      }
      if (request.headers['if-none-match'] === etag) return reply.code(304).headers(headers).send()
      const stored = await store.read(image.id)
      if (stored === undefined) throw new NotFound(IMAGE_NOT_FOUND)
      return reply.headers(headers).type(image.type).header('content-length', stored.size).send(stored.bytes)
    },
  })
}
