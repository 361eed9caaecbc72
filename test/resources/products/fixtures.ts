import { mkdtempSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Product } from '../../../src/resources/products/schemas.js'
import type { ApiResponse, TestKey, TestServer } from '../../helper.js'

/** The magic numbers the server judges an image by, then filler up to `size` bytes. */
const HEADS = {
  png: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  webp: Buffer.concat([Buffer.from('RIFF'), Buffer.from([0x24, 0, 0, 0]), Buffer.from('WEBP')]),
} as const

export type ImageKind = keyof typeof HEADS

export const MB5 = 5 * 1024 * 1024

/** An image of the kind whose bytes are `size` long (its head, then a repeated byte). */
export function image(kind: ImageKind, size = 256, fill = 7): Buffer {
  const head = HEADS[kind]
  return Buffer.concat([head, Buffer.alloc(size - head.length, fill)])
}

export type Part = { name: string; value: string } | { name: string; filename: string; content: Buffer; type?: string }

export const BOUNDARY = '----devplatformTestBoundary7MA4YWxkTrZu0gW'

/** A multipart/form-data body built by hand, so a test controls every byte. */
export function multipartBody(parts: readonly Part[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = []
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}\r\n`))
    if ('value' in part) {
      chunks.push(Buffer.from(`Content-Disposition: form-data; name="${part.name}"\r\n\r\n`), Buffer.from(part.value), Buffer.from('\r\n'))
    } else {
      chunks.push(
        Buffer.from(`Content-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\nContent-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`),
        part.content,
        Buffer.from('\r\n'),
      )
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(chunks)
}

export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`
export const FORM = 'application/x-www-form-urlencoded'

/** Sends a raw body with its content type (real HTTP, like TestServer.request). */
export async function send<T = unknown>(server: TestServer, method: string, path: string, key: TestKey | null, body: Buffer | string | undefined, contentType?: string, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { ...(key === null ? {} : key.headers), ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers },
    ...(body === undefined ? {} : { body }),
  })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text }
}

/** A url-encoded body as the published client builds it (URLSearchParams; lists comma-joined). */
export function urlEncoded(fields: Record<string, string | number | readonly string[]>): string {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(fields)) params.append(name, Array.isArray(value) ? value.join(',') : String(value))
  return params.toString()
}

/** A fresh directory for a test server's product images. */
export function imagesDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'devplatform-product-images-'))
}

/** Every file under the directory (the images stored), by path. */
export function storedFiles(directory: string): string[] {
  const found: string[] = []
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) found.push(...storedFiles(path))
    else if (statSync(path).isFile()) found.push(path)
  }
  return found
}

/** The image id at the end of an uploaded image's URL. */
export function imageIdOf(url: string): string {
  return url.split('/').at(-1) ?? ''
}

export type { Product }
