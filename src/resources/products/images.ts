import { InvalidRequest } from '../../errors.js'
import { isUploadToken, MAX_IMAGES, type StagedImage } from './form-upload.js'
import { isUploaded, type ProductImage, type UploadedImage } from './repository.js'

/** The path of an uploaded image, whatever host the URL names (the server may be reached by several). */
const IMAGE_PATH = /^\/api\/v0\/products\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/images\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i

export const TOO_MANY_IMAGES = `A product has at most ${MAX_IMAGES} images`

/** The 400 for an upload past the cap: how many the product has, and how many more fit. */
export function noRoomFor(current: number): string {
  const room = Math.max(0, MAX_IMAGES - current)
  return `${TOO_MANY_IMAGES}: this one has ${current}, so ${room === 0 ? 'no more can' : `${room} more can`} be added`
}

/**
 * The images a request names, in its order, as the product will hold them:
 * - a file the request uploaded (multipart: its token in `images`), once;
 * - the URL of one of the product's own uploaded images (as its object shows it, on any host,
 *   or its path alone): that image is kept;
 * - any other http or https URL: linked as given (never fetched).
 * A URL of an uploaded image the product does not have (another product's, or one removed) is
 * refused rather than linked, as it would stop working when that image goes.
 */
export function resolveImages(names: readonly string[], own: readonly ProductImage[], staged: readonly StagedImage[], productId: string | undefined): ProductImage[] {
  const unused = new Map(staged.map((image) => [image.token, image]))
  const ownUploads = new Map(own.filter(isUploaded).map((image): [string, UploadedImage] => [image.id, image]))
  const kept = new Set<string>()
  const images = names.map((name, index): ProductImage => {
    if (isUploadToken(name)) {
      const upload = unused.get(name)
      if (upload === undefined) throw new InvalidRequest(`images[${index}] must be an http or https URL`)
      unused.delete(name)
      return { id: upload.key, type: upload.type, size: upload.size }
    }
    const path = name.startsWith('/') ? name : pathOf(name, index)
    const match = IMAGE_PATH.exec(path)
    if (match !== null) {
      const imageId = (match[2] ?? '').toLowerCase()
      const image = ownUploads.get(imageId)
      if (image === undefined || (match[1] ?? '').toLowerCase() !== productId) {
        throw new InvalidRequest(`images[${index}] is the URL of an image this product does not have: upload the image instead`)
      }
      if (kept.has(imageId)) throw new InvalidRequest(`images[${index}] names the same uploaded image twice`)
      kept.add(imageId)
      return image
    }
    // A path alone is only taken as one of the product's own images.
    if (name.startsWith('/')) throw new InvalidRequest(`images[${index}] must be an http or https URL`)
    return { url: name }
  })
  if (images.length > MAX_IMAGES) throw new InvalidRequest(TOO_MANY_IMAGES)
  return images
}

/** The path of an http(s) URL; anything else is refused. */
function pathOf(name: string, index: number): string {
  let url: URL
  try {
    url = new URL(name)
  } catch {
    throw new InvalidRequest(`images[${index}] must be an http or https URL`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || /\s/.test(name)) {
    throw new InvalidRequest(`images[${index}] must be an http or https URL`)
  }
  return url.pathname
}

/** The uploaded images of `before` that `after` no longer has: their bytes go once the change commits. */
export function droppedUploads(before: readonly ProductImage[], after: readonly ProductImage[]): string[] {
  const still = new Set(after.filter(isUploaded).map((image) => image.id))
  return before.filter(isUploaded).filter((image) => !still.has(image.id)).map((image) => image.id)
}
