/** The image types a product may have, by the media type they are served with. */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/webp'] as const
export type ImageType = (typeof IMAGE_TYPES)[number]

/** How many leading bytes decide an image's type (WebP's "RIFF" size "WEBP" header is the longest). */
export const SNIFF_BYTES = 12

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/**
 * The image type a file's first bytes declare (its magic number), or undefined for anything else:
 * the name and the declared Content-Type of an upload are never trusted. `head` is the file's first
 * SNIFF_BYTES bytes, or the whole file when it is shorter.
 */
export function detectImageType(head: Buffer): ImageType | undefined {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg'
  if (head.length >= PNG_SIGNATURE.length && head.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) return 'image/png'
  if (head.length >= 12 && head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'image/webp'
  return undefined
}
