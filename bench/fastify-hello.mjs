// bench:api's reference point: a bare Fastify 5 hello world from the project's own node_modules,
// logger off, GET / → {hello:'world'}, in its own process like the server it is compared with.
// Listens on the port given as its first argument (0 or none: a free one) and sends the port to
// its parent over IPC; exits when the parent goes away.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
await app.listen({ port: Number(process.argv[2] ?? 0), host: '127.0.0.1' })
const address = app.server.address()
process.send?.({ port: typeof address === 'object' && address !== null ? address.port : 0 })
process.on('disconnect', () => process.exit(0))
