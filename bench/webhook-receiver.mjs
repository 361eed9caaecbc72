// The webhook benchmark's receiver, in its own process (its own core on a 2-core machine).
// Answers 200 at once, except /hang, which never answers. Stamps each request when its headers
// have arrived (epoch ms, sub-millisecond) and reports the stamps over IPC when asked.
import { createServer } from 'node:http'

let arrivals = []
const now = () => performance.timeOrigin + performance.now()
const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  arrivals.push([String(request.headers['webhook-id']), now()])
  request.resume()
  if (request.url === '/hang') return
  request.on('end', () => response.end('ok'))
})
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
process.on('message', (message) => {
  if (message === 'take') {
    process.send({ arrivals })
    arrivals = []
  }
})
process.on('disconnect', () => process.exit(0))
