// Preloaded (`node --import`) into server-everything's HTTP mode, which listens on every interface
// (its port comes from $PORT, with no host setting): a port given without a host is bound to
// 127.0.0.1, so the test opens nothing beyond loopback.
import net from 'node:net'

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  const port = args[0]
  const portOnly = typeof port === 'number' || (typeof port === 'string' && /^\d+$/.test(port))
  if (portOnly && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1')
  return listen.apply(this, args)
}
