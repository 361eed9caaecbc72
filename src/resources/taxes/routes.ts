import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { callerOf } from '../../auth/authenticate.js'
import { toTax } from './objects.js'
import { TaxesRepository } from './repository.js'
import { InvalidRequest, NotFound } from '../../errors.js'
import { errorResponses, namesAField } from '../../schemas/common.js'
import { CreateTaxBody, ListTaxesQuery, TaxParams, TaxSchema, UpdateTaxBody } from './schemas.js'
import { operation } from '../manifest.js'
import { taxesManifest } from './manifest.js'

const NOT_FOUND = 'Tax not found'

export const taxRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const taxes = new TaxesRepository(app.db)

  app.route({
    ...operation(taxesManifest, 'taxControllerCreate'),
    schema: {
      tags: ['taxes'],
      summary: 'Create a tax',
      body: CreateTaxBody,
      response: { 201: TaxSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const tax = await app.transact(async (tx) => {
        const created = toTax(await new TaxesRepository(tx.db).create(appId, request.body))
        await tx.events.emit(appId, 'tax.created', created)
        return created
      })
      return reply.code(201).send(tax)
    },
  })

  app.route({
    ...operation(taxesManifest, 'taxControllerFindAll'),
    schema: {
      tags: ['taxes'],
      summary: "List the application's taxes",
      querystring: ListTaxesQuery,
      response: { 200: Type.Array(TaxSchema), ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => (await taxes.list(callerOf(request).appId, request.query)).map(toTax),
  })

  app.route({
    ...operation(taxesManifest, 'taxControllerFindOne'),
    schema: {
      tags: ['taxes'],
      summary: 'Get a tax',
      params: TaxParams,
      response: { 200: TaxSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const row = await taxes.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      return toTax(row)
    },
  })

  app.route({
    ...operation(taxesManifest, 'taxControllerUpdate'),
    schema: {
      tags: ['taxes'],
      summary: 'Update a tax',
      params: TaxParams,
      body: UpdateTaxBody,
      response: { 200: TaxSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      return app.transact(async (tx) => {
        const row = await new TaxesRepository(tx.db).update(appId, request.params.id, request.body)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const tax = toTax(row)
        if (namesAField(request.body)) await tx.events.emit(appId, 'tax.updated', tax)
        return tax
      })
    },
  })

  app.route({
    ...operation(taxesManifest, 'taxControllerRemove'),
    schema: {
      tags: ['taxes'],
      summary: 'Delete a tax (permanent)',
      params: TaxParams,
      response: { 200: TaxSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      return app.transact(async (tx) => {
        const row = await new TaxesRepository(tx.db).delete(appId, request.params.id)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const tax = toTax(row)
        await tx.events.emit(appId, 'tax.deleted', tax)
        return tax
      })
    },
  })
}

/**
 * PUT and DELETE /taxes without an id (also /taxes/, an empty id): always 400, before
 * authentication and before the body is read, whatever the headers or body (onRequest).
 */
export const taxGuardRoutes: FastifyPluginAsyncTypebox = async (app) => {
  for (const operationId of ['taxControllerUpdateWithoutId', 'taxControllerDeleteWithoutId'] as const) {
    const declared = operation(taxesManifest, operationId)
    const method = declared.method
    const verb = method === 'PUT' ? 'update' : 'delete'
    const message = `Tax ID is required in the URL path. Use ${method} /api/v0/taxes/{id} to ${verb} a specific tax.`
    const refuse = async () => {
      throw new InvalidRequest(message)
    }
    for (const url of [declared.url, `${declared.url}/`]) {
      app.route({
        ...declared,
        url,
        schema: {
          hide: url.endsWith('/'),
          tags: ['taxes'],
          summary: `${method} without a tax id (always 400)`,
          response: errorResponses(400),
        },
        onRequest: refuse,
        handler: refuse,
      })
    }
  }
}
