import { createHash, randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { ApiError, BODY_CUT_SHORT } from '../../http/api-error.js'
import { detectImageType, type ImageType, SNIFF_BYTES } from './image-type.js'
import type { ImageStore, ImageWriter } from './image-store.js'
import { type MultipartEvent, MultipartParser, type PartHeaders } from '../../http/multipart.js'

/** What a product request may carry: at most this many images, each at most this many bytes. */
export const MAX_IMAGES = 10
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

/** Most parts one multipart body may have (10 files and the text fields, with room to spare). */
export const MAX_PARTS = 64
/** Most bytes of one text part (ten 2,048-character URLs, or a long description, fit). */
export const MAX_FIELD_BYTES = 64 * 1024

/** The field file parts are sent under (`image`, as one uploads one image, is taken as well). */
export const IMAGE_FIELD = 'images'
/** The same list as encoders that mark a list by brackets send it (the platform's Python SDK): one image per value. */
export const IMAGE_LIST_FIELD = 'images[]'
const FILE_FIELDS = new Set([IMAGE_FIELD, IMAGE_LIST_FIELD, 'image'])

/**
 * The images one text value of a form names: under `images`, a comma-joined list (the published
 * TypeScript client joins the list into one value; blank pieces name nothing), under `images[]`
 * the value whole, one image (a URL may hold a comma); undefined for any other field.
 */
export function imagesNamedBy(field: string, value: string): string[] | undefined {
  if (field === IMAGE_FIELD) return value.split(',').flatMap((piece) => (piece.trim() === '' ? [] : [piece.trim()]))
  if (field === IMAGE_LIST_FIELD) return [value]
  return undefined
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * An image file of a request, written to the store while the request arrived, that no product
 * names yet: it is the product's once the change commits, and removed otherwise.
 */
export interface StagedImage {
  /** the image id: its key in the store */
  key: string
  type: ImageType
  size: number
  /** stands for the file among the body's `images` (its place in the list); the digest makes a replay's body the same */
  token: string
}

/** A multipart form as read: its text fields in order (files as their tokens), and the files written. */
export interface UploadedForm {
  fields: Array<[name: string, value: string]>
  images: StagedImage[]
}

export interface UploadOptions {
  store: ImageStore
  /** how many images (files and URLs) this request may name */
  room: number
  /** the 400 message when it names more */
  tooMany: string
}

const TOKEN_PREFIX = 'upload:'

/** Whether a value in `images` stands for an uploaded file rather than a URL. */
export function isUploadToken(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX)
}

/**
 * Reads a multipart/form-data body as it arrives: text parts into fields, file parts straight
 * into the store, each checked as it streams (its type from its first bytes, its size as it
 * grows, the count of images). A refused body leaves nothing in the store: what it wrote is
 * removed before the error is thrown (a MultipartError for a body that is not multipart, an
 * ApiError for a limit). The stream is never destroyed here, so the refusal can still be answered
 * on its connection.
 */
export async function readMultipartForm(body: Readable, boundary: string, options: UploadOptions): Promise<UploadedForm> {
  const parser = new MultipartParser(boundary)
  const form: UploadedForm = { fields: [], images: [] }
  const reader = new FormReader(form, options)
  try {
    for await (const chunk of chunksOf(body)) {
      for (const event of parser.push(chunk)) await reader.handle(event)
    }
    parser.finish()
    return form
  } catch (error) {
    await reader.abort()
    await options.store.remove(form.images.map((image) => image.key))
    throw error
  }
}

class FormReader {
  private parts = 0
  private imageCount = 0
  /** the file part being written */
  private file: { headers: PartHeaders; writer: ImageWriter | undefined; head: Buffer[]; headBytes: number; size: number; digest: ReturnType<typeof createHash>; index: number } | undefined
  /** the text part being read */
  private text: { name: string; chunks: Buffer[]; size: number } | undefined

  constructor(
    private readonly form: UploadedForm,
    private readonly options: UploadOptions,
  ) {}

  async handle(event: MultipartEvent): Promise<void> {
    switch (event.kind) {
      case 'part':
        this.start(event.headers)
        return
      case 'data':
        if (this.file !== undefined) await this.fileBytes(event.bytes)
        else this.textBytes(event.bytes)
        return
      case 'part-end':
        if (this.file !== undefined) await this.endFile()
        else this.endText()
        return
      case 'end':
        return
    }
  }

  /** Stops the file being written, if any, and removes its bytes. */
  async abort(): Promise<void> {
    const writer = this.file?.writer
    this.file = undefined
    await writer?.abort()
  }

  private start(headers: PartHeaders): void {
    if (++this.parts > MAX_PARTS) throw new ApiError(400, `The multipart body has more than ${MAX_PARTS} parts`)
    if (headers.filename === undefined) {
      this.text = { name: headers.name, chunks: [], size: 0 }
      return
    }
    if (!FILE_FIELDS.has(headers.name)) throw new ApiError(400, `Files go in the "${IMAGE_FIELD}" field (got a file in "${headers.name}")`)
    this.file = { headers, writer: undefined, head: [], headBytes: 0, size: 0, digest: createHash('sha256'), index: this.imageCount }
  }

  private textBytes(bytes: Buffer): void {
    const text = this.text
    if (text === undefined) return
    text.size += bytes.length
    if (text.size > MAX_FIELD_BYTES) throw new ApiError(400, `The field "${text.name}" is longer than ${MAX_FIELD_BYTES} bytes`)
    text.chunks.push(bytes)
  }

  private endText(): void {
    const text = this.text
    if (text === undefined) return
    this.text = undefined
    let value: string
    try {
      value = utf8.decode(Buffer.concat(text.chunks))
    } catch {
      throw new ApiError(400, `The field "${text.name}" is not valid UTF-8`)
    }
    const images = imagesNamedBy(text.name, value)
    if (images !== undefined) this.count(images.length)
    this.form.fields.push([text.name, value])
  }

  private async fileBytes(bytes: Buffer): Promise<void> {
    const file = this.file
    if (file === undefined) return
    file.size += bytes.length
    if (file.size > MAX_IMAGE_BYTES) {
      throw new ApiError(413, `${describe(file.headers, file.index)} is larger than 5 MB (${MAX_IMAGE_BYTES} bytes), the most an image may be`)
    }
    file.digest.update(bytes)
    if (file.writer === undefined) {
      // The type is decided on the first SNIFF_BYTES bytes, before anything is stored.
      file.head.push(bytes)
      file.headBytes += bytes.length
      if (file.headBytes < SNIFF_BYTES) return
      await this.open(file)
      return
    }
    await file.writer.write(bytes)
  }

  private async open(file: NonNullable<FormReader['file']>): Promise<void> {
    const head = Buffer.concat(file.head)
    file.head = []
    const type = detectImageType(head)
    if (type === undefined) throw new ApiError(400, `${describe(file.headers, file.index)} is not a JPEG, PNG or WebP image (judged by its bytes)`)
    this.count(1)
    const key = randomUUID()
    file.writer = await this.options.store.create(key)
    // Listed before any byte is written, so a refusal from here on removes it.
    const staged: StagedImage = { key, type, size: 0, token: '' }
    this.form.images.push(staged)
    await file.writer.write(head)
  }

  private async endFile(): Promise<void> {
    const file = this.file
    if (file === undefined) return
    // A form's file input left empty is sent as a part with no name and no bytes: no file.
    if (file.size === 0 && file.headers.filename === '') {
      this.file = undefined
      return
    }
    if (file.writer === undefined) await this.open(file)
    const writer = file.writer
    const staged = this.form.images.at(-1)
    if (writer === undefined || staged === undefined) return
    await writer.finish()
    this.file = undefined
    staged.size = file.size
    staged.token = `${TOKEN_PREFIX}${file.index}:${staged.type}:${file.size}:${file.digest.digest('hex')}`
    // The file takes its place in the list under the name it was sent with (`image` is `images`).
    this.form.fields.push([file.headers.name === IMAGE_LIST_FIELD ? IMAGE_LIST_FIELD : IMAGE_FIELD, staged.token])
  }

  private count(images: number): void {
    this.imageCount += images
    if (this.imageCount > this.options.room) throw new ApiError(400, this.options.tooMany)
  }
}

/** "images[2] ("photo.png")": which image, as the caller would recognise it. */
function describe(headers: PartHeaders, index: number): string {
  const name = headers.filename === undefined || headers.filename === '' ? '' : ` (${JSON.stringify(headers.filename.slice(0, 100))})`
  return `${IMAGE_FIELD}[${index}]${name}`
}

const bodyCutShort = () => new ApiError(400, BODY_CUT_SHORT)

/**
 * The stream's chunks, read as they come (with backpressure: nothing more is read until the
 * consumer asks). Unlike `for await` over the stream itself, leaving the loop early does not
 * destroy the stream, whose socket must still carry the answer.
 */
export async function* chunksOf(stream: Readable): AsyncGenerator<Buffer> {
  for (;;) {
    const chunk: unknown = stream.read()
    if (chunk !== null) {
      yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk))
      continue
    }
    if (stream.readableEnded) return
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        stream.off('readable', onReadable)
        stream.off('end', onEnd)
        stream.off('error', onError)
        stream.off('close', onClose)
        if (error === undefined) resolve()
        else reject(error)
      }
      const onReadable = () => settle()
      const onEnd = () => settle()
      // The client went away mid-body: nobody is left to answer, and nothing of ours failed.
      const onError = () => settle(bodyCutShort())
      const onClose = () => settle(stream.readableEnded ? undefined : bodyCutShort())
      stream.on('readable', onReadable)
      stream.on('end', onEnd)
      stream.on('error', onError)
      stream.on('close', onClose)
    })
  }
}
