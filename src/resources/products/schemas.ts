import { Type, type Static } from 'typebox'
import { MAX_IMAGES } from './form-upload.js'
import { PRODUCT_CURRENCIES } from './price.js'
import { Pagination, Timestamp, UuidParam } from '../../schemas/common.js'

export const PRODUCT_STATUSES = ['ACTIVE', 'INACTIVE'] as const

/** Longest image URL accepted. */
export const MAX_IMAGE_URL_LENGTH = 2048
/** Largest quantity and stock count (a 32-bit integer column on PostgreSQL). */
const MAX_COUNT = 2_147_483_647

/**
 * The product the docs page shows (the one docs/products.md shows): made with an image file and a
 * linked image, so its first image is served by this server and its second is the link as given.
 */
const PRODUCT_EXAMPLE = {
  id: '01a2128f-61dc-7488-a402-8a1d7b0bbaad',
  name: 'Premium Widget',
  description: 'High-quality widget for all your needs',
  price: '99.99',
  currency: 'USD',
  type: 'physical',
  productType: 'widget',
  weight: 1.25,
  unit: 'kg',
  quantity: 1,
  stockCount: 40,
  status: 'ACTIVE',
  images: [
    'https://api.example.com/api/v0/products/01a2128f-61dc-7488-a402-8a1d7b0bbaad/images/72981706-ec79-4808-839c-09d9d7c1774c',
    'https://cdn.example.com/widget-side.png',
  ],
  created_at: '2026-11-25T11:55:16.316Z',
  updated_at: '2026-11-25T11:55:16.316Z',
} as const

const LINKED_IMAGE_EXAMPLE = PRODUCT_EXAMPLE.images[1]

const currency = Type.Enum([...PRODUCT_CURRENCIES])
const status = Type.Enum([...PRODUCT_STATUSES])

export const ProductSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', examples: [PRODUCT_EXAMPLE.id] }),
    name: Type.String({ examples: [PRODUCT_EXAMPLE.name] }),
    description: Type.Union([Type.String(), Type.Null()], { examples: [PRODUCT_EXAMPLE.description] }),
    price: Type.String({ description: "decimal, with all of the currency's decimals (none for JPY)", examples: [PRODUCT_EXAMPLE.price] }),
    currency,
    type: Type.Union([Type.String(), Type.Null()], { examples: [PRODUCT_EXAMPLE.type] }),
    productType: Type.Union([Type.String(), Type.Null()], { examples: [PRODUCT_EXAMPLE.productType] }),
    weight: Type.Union([Type.Number(), Type.Null()], { examples: [PRODUCT_EXAMPLE.weight] }),
    unit: Type.Union([Type.String(), Type.Null()], { examples: [PRODUCT_EXAMPLE.unit] }),
    quantity: Type.Union([Type.Integer(), Type.Null()], { examples: [PRODUCT_EXAMPLE.quantity] }),
    stockCount: Type.Union([Type.Integer(), Type.Null()], { examples: [PRODUCT_EXAMPLE.stockCount] }),
    status,
    images: Type.Array(Type.String({ examples: [PRODUCT_EXAMPLE.images[0]] }), {
      description: 'image URLs in order: uploaded images are served by this server, linked ones are as given',
      examples: [PRODUCT_EXAMPLE.images],
    }),
    created_at: { ...Timestamp, examples: [PRODUCT_EXAMPLE.created_at] },
    updated_at: { ...Timestamp, examples: [PRODUCT_EXAMPLE.updated_at] },
  },
  { $id: 'Product', examples: [PRODUCT_EXAMPLE] },
)
export type Product = Static<typeof ProductSchema>

const PRICE_MESSAGE = 'price must be a decimal number such as 19.99'
const imageUrl = Type.String({ minLength: 1, maxLength: MAX_IMAGE_URL_LENGTH, description: 'an http or https URL, or the URL of one of this product’s uploaded images', examples: [LINKED_IMAGE_EXAMPLE] })

const fields = {
  name: Type.String({ minLength: 1, maxLength: 255, examples: [PRODUCT_EXAMPLE.name] }),
  // Free text: tab and line breaks allowed; "" clears it.
  description: Type.String({ maxLength: 5000, 'x-free-text': true, examples: [PRODUCT_EXAMPLE.description] }),
  // A JSON number is read as the decimal it was written as; text keeps every digit.
  price: Type.Union([Type.Number({ 'x-message': PRICE_MESSAGE }), Type.String({ maxLength: 40, 'x-message': PRICE_MESSAGE })], {
    'x-message': PRICE_MESSAGE,
    description: 'greater than 0, with at most the currency’s decimals (none for JPY), at most 999999999.99',
    examples: ['99.99'],
  }),
  currency,
  type: Type.String({ maxLength: 100, examples: [PRODUCT_EXAMPLE.type] }),
  productType: Type.String({ maxLength: 100, examples: [PRODUCT_EXAMPLE.productType] }),
  weight: Type.Number({ minimum: 0, maximum: 1_000_000, examples: [PRODUCT_EXAMPLE.weight] }),
  unit: Type.String({ maxLength: 50, examples: [PRODUCT_EXAMPLE.unit] }),
  quantity: Type.Integer({ minimum: 0, maximum: MAX_COUNT, examples: [PRODUCT_EXAMPLE.quantity] }),
  stockCount: Type.Integer({ minimum: 0, maximum: MAX_COUNT, examples: [PRODUCT_EXAMPLE.stockCount] }),
  status,
  images: Type.Array(imageUrl, { maxItems: MAX_IMAGES }),
}

/** In multipart/form-data, `images` also carries the image files themselves. */
const imagesWithFiles = Type.Array(Type.Union([imageUrl, Type.String({ contentMediaType: 'application/octet-stream', description: 'a JPEG, PNG or WebP file, at most 5 MB' })]), {
  maxItems: MAX_IMAGES,
})

/** The create body the docs page offers: the Product example's fields, with its linked image (an image file is uploaded in a multipart body). */
const CREATE_EXAMPLE = {
  name: PRODUCT_EXAMPLE.name,
  description: PRODUCT_EXAMPLE.description,
  price: PRODUCT_EXAMPLE.price,
  currency: PRODUCT_EXAMPLE.currency,
  type: PRODUCT_EXAMPLE.type,
  weight: PRODUCT_EXAMPLE.weight,
  unit: PRODUCT_EXAMPLE.unit,
  quantity: PRODUCT_EXAMPLE.quantity,
  stockCount: PRODUCT_EXAMPLE.stockCount,
  status: PRODUCT_EXAMPLE.status,
  productType: PRODUCT_EXAMPLE.productType,
  images: [LINKED_IMAGE_EXAMPLE],
}

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
    { additionalProperties: false, examples: [CREATE_EXAMPLE] },
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
    // A new price and what is left in stock; the fields not named are kept.
    { additionalProperties: false, examples: [{ price: '89.99', stockCount: 35 }] },
  )
}

export const CreateProductBody = productBody(fields.images)
export type CreateProductBody = Static<typeof CreateProductBody>
export const UpdateProductBody = productChanges(fields.images)
export type UpdateProductBody = Static<typeof UpdateProductBody>

const ADD_IMAGES_EXAMPLE = { images: ['https://cdn.example.com/widget-back.png'] }

export const AddImagesBody = Type.Object({ images: Type.Array(imageUrl, { minItems: 1, maxItems: MAX_IMAGES }) }, { additionalProperties: false, examples: [ADD_IMAGES_EXAMPLE] })
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
export const AddImagesContent = encodings(
  AddImagesBody,
  Type.Object({ images: Type.Array(imagesWithFiles.items, { minItems: 1, maxItems: MAX_IMAGES }) }, { additionalProperties: false, examples: [ADD_IMAGES_EXAMPLE] }),
)

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
    total: Type.Integer({ examples: [1] }),
    skip: Type.Integer({ examples: [0] }),
    take: Type.Integer({ examples: [10] }),
  },
  { $id: 'ProductList', examples: [{ data: [PRODUCT_EXAMPLE], total: 1, skip: 0, take: 10 }] },
)
export type ProductList = Static<typeof ProductListSchema>
