/**
 * A free TCP port on 127.0.0.1, found by listening on port 0 and closing. For what must know its
 * port before it listens: a cluster runner's address is written to the store, a PostgreSQL port
 * goes on its command line. (Another process could take it in between; on loopback, in a test,
 * it does not.)
 */
import { createServer } from "node:net"

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
