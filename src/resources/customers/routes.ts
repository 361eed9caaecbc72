import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { callerOf } from '../../auth/authenticate.js'
import { toCustomer } from './objects.js'
import { CustomersRepository } from './repository.js'
import { NotFound } from '../../errors.js'
import { namesAField } from '../../schemas/common.js'
import { errorResponses } from '../../schemas/common.js'
import {
  CreateCustomerBody,
  CustomerListSchema,
  CustomerParams,
  CustomerSchema,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './schemas.js'
import { operation } from '../manifest.js'
import { customersManifest } from './manifest.js'

const NOT_FOUND = 'Customer not found'

export const customerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const customers = new CustomersRepository(app.db)

  app.route({
    ...operation(customersManifest, 'customerControllerCreate'),
    schema: {
      tags: ['customers'],
      summary: 'Create a customer',
      body: CreateCustomerBody,
      response: { 201: CustomerSchema, ...errorResponses(400, 401, 403, 409, 429) },
    },
    handler: async (request, reply) => {
      const { appId } = callerOf(request)
      const customer = await app.transact(async (tx) => {
        const created = toCustomer(await new CustomersRepository(tx.db).create(appId, request.body))
        await tx.events.emit(appId, 'customer.created', created)
        return created
      })
      return reply.code(201).send(customer)
    },
  })

  app.route({
    ...operation(customersManifest, 'customerControllerFindAll'),
    schema: {
      tags: ['customers'],
      summary: "List the application's customers",
      querystring: ListCustomersQuery,
      response: { 200: CustomerListSchema, ...errorResponses(400, 401, 403, 429) },
    },
    handler: async (request) => {
      const skip = request.query.skip ?? 0
      const take = request.query.take ?? 10
      const { rows, total } = await customers.list(callerOf(request).appId, { ...request.query, skip, take })
      return { data: rows.map(toCustomer), total, skip, take }
    },
  })

  app.route({
    ...operation(customersManifest, 'customerControllerFindOne'),
    schema: {
      tags: ['customers'],
      summary: 'Get a customer',
      params: CustomerParams,
      response: { 200: CustomerSchema, ...errorResponses(400, 401, 403, 404, 429) },
    },
    handler: async (request) => {
      const row = await customers.find(callerOf(request).appId, request.params.id)
      if (row === undefined) throw new NotFound(NOT_FOUND)
      return toCustomer(row)
    },
  })

  app.route({
    ...operation(customersManifest, 'customerControllerUpdate'),
    schema: {
      tags: ['customers'],
      summary: 'Update a customer',
      params: CustomerParams,
      body: UpdateCustomerBody,
      response: { 200: CustomerSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
    },
    handler: async (request) => {
      const { appId } = callerOf(request)
      return app.transact(async (tx) => {
        const row = await new CustomersRepository(tx.db).update(appId, request.params.id, request.body)
        if (row === undefined) throw new NotFound(NOT_FOUND)
        const customer = toCustomer(row)
        if (namesAField(request.body)) await tx.events.emit(appId, 'customer.updated', customer)
        return customer
      })
    },
  })
}
