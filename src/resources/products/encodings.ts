import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../../http/api-error.js'
import { drainBody } from '../../http/drain-body.js'
import { IMAGE_FIELD, imagesNamedBy, MAX_IMAGES, MAX_PARTS, readMultipartForm, type StagedImage } from './form-upload.js'
import type { ImageStore } from './image-store.js'
import { boundaryOf, MultipartError } from '../../http/multipart.js'
import { TOO_MANY_IMAGES } from './images.js'

/**
 * The three encodings the product routes read, on the same routes: JSON (the app's own parser),
 * application/x-www-form-urlencoded (what the published client sends: numbers as text, `images`
 * one comma-joined value) and multipart/form-data (image files in `images`, streamed to the
 * ImageStore). In both forms the list may also come as `images[]` values, one image each (the
 * platform's Python SDK). Both forms become the object a JSON body would be, so one schema
 * validates all three.
 * Registered in the products' own plugin: no other route reads a form.
 */

export const UNSUPPORTED_MEDIA_TYPE = 'Unsupported Media Type: send application/json, application/x-www-form-urlencoded or multipart/form-data'

/** Fields a form sends as text that the body holds as numbers (a text that is not a number stays text, and fails validation). */
const NUMBER_FIELDS = new Set(['weight', 'quantity', 'stockCount'])
const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/
const FORM_CHARSETS = new Set(['utf-8', 'utf8'])

/** A request's uploaded images: how many it may add, and those written so far. */
interface Upload {
  room: number
  tooMany: string
  staged: StagedImage[]
  /** true once a committed product names them: they are no longer removed with the answer */
  kept: boolean
}

const uploads = new WeakMap<FastifyRequest, Upload>()

/** How many images the request may name (set before its body is read; MAX_IMAGES unless said). */
export function allowImages(request: FastifyRequest, room: number, tooMany: string): Upload {
  const upload: Upload = { room, tooMany, staged: [], kept: false }
  uploads.set(request, upload)
  return upload
}

/** The images the request's multipart body uploaded (none for the other encodings). */
export function stagedImagesOf(request: FastifyRequest): readonly StagedImage[] {
  return uploads.get(request)?.staged ?? []
}

/** The request's uploaded images now belong to a committed product: they stay after the answer. */
export function keepStagedImages(request: FastifyRequest): void {
  const upload = uploads.get(request)
  if (upload !== undefined) upload.kept = true
}

export function registerProductEncodings(app: FastifyInstance, store: ImageStore): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    try {
      refuseUnreadable(request.headers, true)
      done(null, formBody(parseUrlEncoded(body)))
    } catch (error) {
      done(error instanceof Error ? error : new Error(String(error)), undefined)
    }
  })

  app.addContentTypeParser('multipart/form-data', async (request: FastifyRequest, payload: Readable) => {
    try {
      refuseUnreadable(request.headers, false)
      const boundary = boundaryOf(request.headers['content-type'] ?? '')
      const upload = uploads.get(request) ?? allowImages(request, MAX_IMAGES, TOO_MANY_IMAGES)
      const form = await readMultipartForm(payload, boundary, { store, room: upload.room, tooMany: upload.tooMany })
      // From here on a refusal (this form's fields included) removes them before it is answered.
      upload.staged.push(...form.images)
      return formBody(form.fields)
    } catch (error) {
      throw await answerable(request, requestError(request, error))
    }
  })

  // Any other type: the products' own 415, naming the three they read.
  app.addContentTypeParser('*', async (request: FastifyRequest) => {
    throw await answerable(request, new ApiError(415, UNSUPPORTED_MEDIA_TYPE))
  })

  // Refused after the body was read (validation, a missing product, a failed commit): the images
  // it uploaded are removed before the answer leaves, so a refused request stores nothing.
  app.addHook('onSend', async (request, _reply, payload) => {
    const upload = uploads.get(request)
    if (upload !== undefined && !upload.kept && upload.staged.length > 0) {
      const keys = upload.staged.map((image) => image.key)
      upload.staged = []
      try {
        await store.remove(keys)
      } catch (error) {
        // The answer stands; the files are left where no product names them.
        request.log.warn({ err: error, images: keys }, 'images of a refused request could not be removed from the store')
      }
    }
    return payload
  })
}

export const IMAGE_STORAGE_UNAVAILABLE = 'Image storage is unavailable'

/** What to answer for an error reading a multipart body: the caller's fault as it is, a storage fault as 503. */
function requestError(request: FastifyRequest, error: unknown): unknown {
  if (error instanceof ApiError) return error
  if (error instanceof MultipartError) return new ApiError(400, error.message)
  request.log.error({ err: error }, 'product images could not be stored')
  return new ApiError(503, IMAGE_STORAGE_UNAVAILABLE, { details: 'Retry the request shortly', headers: { 'Retry-After': '1' } })
}

/**
 * The error, once the rest of the refused body has been read (within drainBody's bounds), so the
 * client is not cut off while still sending and can read the answer; a body still arriving at
 * the bound gets its connection closed after the answer.
 */
async function answerable(request: FastifyRequest, error: unknown): Promise<unknown> {
  if (!(error instanceof ApiError)) return error
  const outcome = await drainBody(request.raw)
  if (outcome !== 'cut') return error
  return new ApiError(error.statusCode, error.message, { ...(error.details === undefined ? {} : { details: error.details }), headers: { ...error.headers, Connection: 'close' } })
}

/** A content coding or a charset the server does not read: 415, as for JSON. */
function refuseUnreadable(headers: IncomingHttpHeaders, checkCharset: boolean): void {
  const codings = (headers['content-encoding'] ?? '').split(',').map((coding) => coding.trim().toLowerCase())
  if (codings.some((coding) => coding !== '' && coding !== 'identity')) {
    throw new ApiError(415, 'Unsupported Content-Encoding: send the body unencoded (no Content-Encoding, or identity)', { headers: { 'Accept-Encoding': 'identity' } })
  }
  if (!checkCharset) return
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(headers['content-type'] ?? '')?.[1]?.toLowerCase()
  if (charset !== undefined && !FORM_CHARSETS.has(charset)) {
    throw new ApiError(415, 'Unsupported charset: send application/x-www-form-urlencoded in UTF-8 (charset=utf-8, or no charset)')
  }
}

/**
 * The name=value pairs of an application/x-www-form-urlencoded body (WHATWG URL's
 * serialization: `+` is a space, percent-escapes are UTF-8). Unlike URLSearchParams, a malformed
 * escape or one that is not UTF-8 is refused rather than read as U+FFFD.
 */
export function parseUrlEncoded(body: Buffer): Array<[string, string]> {
  const text = body.toString('latin1')
  if (/[^\x20-\x7e]/.test(text)) throw new ApiError(400, 'Request body is not valid application/x-www-form-urlencoded: send non-ASCII text percent-encoded')
  const pairs: Array<[string, string]> = []
  for (const pair of text.split('&')) {
    if (pair === '') continue
    if (pairs.length === MAX_PARTS) throw new ApiError(400, `Request body has more than ${MAX_PARTS} fields`)
    const equals = pair.indexOf('=')
    pairs.push([decodeFormText(equals === -1 ? pair : pair.slice(0, equals)), decodeFormText(equals === -1 ? '' : pair.slice(equals + 1))])
  }
  return pairs
}

function decodeFormText(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    throw new ApiError(400, 'Request body is not valid application/x-www-form-urlencoded: a percent-escape is malformed or not UTF-8')
  }
}

export const IMAGES_UNDER_TWO_NAMES = 'The images are sent both as "images" and as "images[]": send the list under one of the two names'

/**
 * A form's fields as the object a JSON body would be: `images` from every value given for it,
 * in order, under one of its two names (imagesNamedBy: `images` values split at commas, an empty
 * one an empty list; `images[]` values one image each), the number fields as numbers, every other
 * field as its text, given once.
 */
export function formBody(fields: ReadonlyArray<readonly [string, string]>): Record<string, unknown> {
  // No prototype: a field named __proto__ is a field like any other (and refused as unknown).
  const body: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  const images: string[] = []
  let imagesSentAs: string | undefined
  for (const [name, value] of fields) {
    const named = imagesNamedBy(name, value)
    if (named !== undefined) {
      // Which of the two is the list, and in what order, would be a guess.
      if (imagesSentAs !== undefined && imagesSentAs !== name) throw new ApiError(400, IMAGES_UNDER_TWO_NAMES)
      imagesSentAs = name
      body[IMAGE_FIELD] = images
      images.push(...named)
      continue
    }
    if (Object.hasOwn(body, name)) throw new ApiError(400, `The field "${name}" is given more than once`)
    body[name] = NUMBER_FIELDS.has(name) && NUMBER_TEXT.test(value) ? Number(value) : value
  }
  return body
}
