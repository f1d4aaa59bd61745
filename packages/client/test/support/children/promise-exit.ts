/**
 * A Promise API program that connects with the default (shared) HTTP client, calls a tool,
 * closes, and then just ends: the process must exit on its own, the client's idle keep-alive
 * sockets notwithstanding. Prints the tool's answer.
 *
 *   tsx --conditions=@phasebound/source promise-exit.ts <url>
 */
import { connect } from "@phasebound/client/promise"

const connection = await connect({ url: process.argv[2]! })
const result = await connection.callTool("add", { a: 2, b: 3 })
await connection.close()
process.stdout.write(JSON.stringify(result) + "\n")
