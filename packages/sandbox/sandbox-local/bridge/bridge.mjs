// The network bridge inside a confined command's private network namespace (@dsh/sandbox-local): it listens
// on the namespace's own loopback, where HTTP(S)_PROXY points, and carries each connection to the host's
// allow-list proxy through the Unix socket bound into the sandbox. It prints `ready` once listening, so the
// command starts only when the proxy is reachable, and it dies with the command (pid namespace).
// Plain JavaScript on purpose: it runs under the host's node from a read-only root, outside any build.
import { connect, createServer } from 'node:net'

const [socketPath, port] = process.argv.slice(2)
// A Ctrl-C in the command's terminal is for the command, not for its network.
for (const signal of ['SIGINT', 'SIGHUP', 'SIGQUIT']) process.on(signal, () => {})

const server = createServer((client) => {
  const upstream = connect(socketPath)
  const close = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', close).on('close', close)
  upstream.on('error', close).on('close', close)
  client.pipe(upstream).pipe(client)
})
server.on('error', () => process.exit(1))
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'))
