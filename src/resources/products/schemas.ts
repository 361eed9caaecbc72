import { Type, type Static } from 'typebox'
import { MAX_IMAGES } from '../../products/form-upload.js'
import { PRODUCT_CURRENCIES } from '../../products/price.js'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

export const PRODUCT_STATUSES = ['ACTIVE', 'INACTIVE'] as const

/** Longest image URL accepted. */
export const MAX_IMAGE_URL_LENGTH = 2048
/** Largest quantity and stock count (a 32-bit integer column on PostgreSQL). */
const MAX_COUNT = 2_147_483_647

const currency = Type.Enum([...PRODUCT_CURRENCIES])
const status = Type.Enum([...PRODUCT_STATUSES])

export const ProductSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    price: Type.String({ description: "decimal, with all of the currency's decimals (none for JPY)", examples: ['99.99'] }),
    currency,
    type: Type.Union([Type.String(), Type.Null()]),
    productType: Type.Union([Type.String(), Type.Null()]),
    weight: Type.Union([Type.Number(), Type.Null()]),
    unit: Type.Union([Type.String(), Type.Null()]),
    quantity: Type.Union([Type.Integer(), Type.Null()]),
    stockCount: Type.Union([Type.Integer(), Type.Null()]),
    status,
    images: Type.Array(Type.String(), { description: 'image URLs in order: uploaded images are served by this server, linked ones are as given' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Product' },
)
export type Product = Static<typeof ProductSchema>

const PRICE_MESSAGE = 'price must be a decimal number such as 19.99'
const imageUrl = Type.String({ minLength: 1, maxLength: MAX_IMAGE_URL_LENGTH, description: 'an http or https URL, or the URL of one of this product’s uploaded images' })

const fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  // Free text: tab and line breaks allowed; "" clears it.
  description: Type.String({ maxLength: 5000, 'x-free-text': true }),
  // A JSON number is read as the decimal it was written as; text keeps every digit.
  price: Type.Union([Type.Number({ 'x-message': PRICE_MESSAGE }), Type.String({ maxLength: 40, 'x-message': PRICE_MESSAGE })], {
    'x-message': PRICE_MESSAGE,
    description: 'greater than 0, with at most the currency’s decimals (none for JPY), at most 999999999.99',
    examples: ['99.99'],
  }),
  currency,
  type: Type.String({ maxLength: 100 }),
  productType: Type.String({ maxLength: 100 }),
  weight: Type.Number({ minimum: 0, maximum: 1_000_000 }),
  unit: Type.String({ maxLength: 50 }),
  quantity: Type.Integer({ minimum: 0, maximum: MAX_COUNT }),
  stockCount: Type.Integer({ minimum: 0, maximum: MAX_COUNT }),
  status,
  images: Type.Array(imageUrl, { maxItems: MAX_IMAGES }),
}

/** In multipart/form-data, `images` also carries the image files themselves. */
const imagesWithFiles = Type.Array(Type.Union([imageUrl, Type.String({ contentMediaType: 'application/octet-stream', description: 'a JPEG, PNG or WebP file, at most 5 MB' })]), {
  maxItems: MAX_IMAGES,
})

function productBody(images: typeof fields.images | typeof imagesWithFiles) {
  return Type.Object(
    {
      name: fields.name,
      description: Type.Optional(fields.description),
      price: fields.price,
      currency: Type.Optional(Type.Enum([...PRODUCT_CURRENCIES], { default: 'USD' })),
      type: Type.Optional(fields.type),
      weight: Type.Optional(fields.weight),
      unit: Type.Optional(fields.unit),
      quantity: Type.Optional(fields.quantity),
      stockCount: Type.Optional(fields.stockCount),
      status: Type.Optional(Type.Enum([...PRODUCT_STATUSES], { default: 'ACTIVE' })),
      productType: Type.Optional(fields.productType),
      images: Type.Optional(images),
    },
    { additionalProperties: false },
  )
}

function productChanges(images: typeof fields.images | typeof imagesWithFiles) {
  return Type.Object(
    {
      name: Type.Optional(fields.name),
      description: Type.Optional(fields.description),
      price: Type.Optional(fields.price),
      currency: Type.Optional(fields.currency),
      type: Type.Optional(fields.type),
      weight: Type.Optional(fields.weight),
      unit: Type.Optional(fields.unit),
      quantity: Type.Optional(fields.quantity),
      stockCount: Type.Optional(fields.stockCount),
      status: Type.Optional(fields.status),
      productType: Type.Optional(fields.productType),
      images: Type.Optional(images),
    },
    { additionalProperties: false },
  )
}

export const CreateProductBody = productBody(fields.images)
export type CreateProductBody = Static<typeof CreateProductBody>
export const UpdateProductBody = productChanges(fields.images)
export type UpdateProductBody = Static<typeof UpdateProductBody>

export const AddImagesBody = Type.Object({ images: Type.Array(imageUrl, { minItems: 1, maxItems: MAX_IMAGES }) }, { additionalProperties: false })
export type AddImagesBody = Static<typeof AddImagesBody>

/**
 * A route body in the three encodings the product routes read (src/resources/products/encodings.ts):
 * each is read into the same object and validated by the same rules; multipart/form-data's
 * `images` may also hold files.
 */
function encodings<Plain, WithFiles>(plain: Plain, withFiles: WithFiles) {
  return {
    content: {
      'application/x-www-form-urlencoded': { schema: plain },
      'multipart/form-data': { schema: withFiles },
      'application/json': { schema: plain },
    },
  }
}

export const CreateProductContent = encodings(CreateProductBody, productBody(imagesWithFiles))
export const UpdateProductContent = encodings(UpdateProductBody, productChanges(imagesWithFiles))
export const AddImagesContent = encodings(AddImagesBody, Type.Object({ images: Type.Array(imagesWithFiles.items, { minItems: 1, maxItems: MAX_IMAGES }) }, { additionalProperties: false }))

export const ProductParams = Type.Object({ id: UuidParam('product') })
export const ProductImageParams = Type.Object({ id: UuidParam('product'), imageId: UuidParam('image') })

export const ListProductsQuery = Type.Object({
  ...Pagination,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'partial, case-insensitive match' })),
  status: Type.Optional(status),
  currency: Type.Optional(currency),
})
export type ListProductsQuery = Static<typeof ListProductsQuery>

export const ProductListSchema = Type.Object(
  {
    data: Type.Array(ProductSchema),
    total: Type.Integer(),
    skip: Type.Integer(),
    take: Type.Integer(),
  },
  { $id: 'ProductList' },
)
export type ProductList = Static<typeof ProductListSchema>
