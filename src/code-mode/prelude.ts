/**
 * Guest-side source evaluated in every fresh QuickJS context before the program.
 *
 * It evaluates to a factory taking the host functions (never exposed as globals) and the replay
 * tape (JSON text, or undefined), and returning `start(main)`. It defines `tools` (a proxy: every string key is a binding, so unknown
 * names still dispatch and come back as `UNKNOWN_TOOL`), `ToolCallError`, a capturing `console`, `crypto.getRandomValues` (recorded like the clock),
 * and disables dynamic code (`eval`, `Function` and its async/generator siblings): QuickJS's
 * parser can exhaust the host stack before its own stack limit trips.
 *
 * Values cross as JSON text produced by an iterative encoder that rejects, with a path, anything
 * that is not lossless JSON (undefined, functions, symbols, bigints, non-finite numbers, cycles,
 * accessors, sparse arrays, non-plain objects). `-0` crosses as `0`, as `JSON.stringify` would.
 */
/** At most this many clock readings and random numbers of one run are recorded for a replay. */
export const MAX_RECORDED_DRAWS = 4096

export const PRELUDE_SOURCE = `(function (hostCall, hostLog, hostSettle, tapeText, hostRandom) {
  'use strict'
  const G = globalThis

  // The program's non-determinism (the clock, Math.random, crypto.getRandomValues) is recorded and
  // reported with the next tool call, so a paused program re-runs the same way; a replay reads the
  // recorded values first. Each kind has its own range, so a replay that asks for another kind is
  // noticed: a clock reading is itself (above -1), a random number r is -2 - r (in (-3, -2]), and
  // up to four random bytes b are -4 - b read big-endian (at most -4).
  const tape = tapeText === undefined ? [] : JSON.parse(tapeText)
  let tapeAt = 0
  let drawn = []
  let drawCount = 0
  let overflow = false
  let mismatch = false
  const realNow = Date.now
  const realRandom = Math.random
  const RealDate = Date
  const CLOCK = 0, RANDOM = 1, BYTES = 2
  const kindOf = (recorded) => (recorded > -1 ? CLOCK : recorded > -3 ? RANDOM : BYTES)
  const encodeDraw = (kind, value) => (kind === CLOCK ? value : kind === RANDOM ? -2 - value : -4 - value)
  // fresh() is the live value; the recorded one (already encoded) is returned when the tape has it.
  const drawEncoded = (kind, fresh) => {
    let encoded
    if (tapeAt < tape.length) {
      encoded = tape[tapeAt++]
      if (kindOf(encoded) !== kind) mismatch = true
    } else encoded = encodeDraw(kind, fresh())
    if (++drawCount > ${MAX_RECORDED_DRAWS}) overflow = true
    else drawn.push(encoded)
    return encoded
  }
  const draw = (isClock) => {
    const kind = isClock ? CLOCK : RANDOM
    const encoded = drawEncoded(kind, isClock ? realNow : realRandom)
    return kind === CLOCK ? encoded : -2 - encoded
  }
  // crypto.getRandomValues: the host's secure random bytes, drawn (and recorded) four at a time.
  const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype)
  const getter = (name) => Object.getOwnPropertyDescriptor(TypedArrayProto, name).get
  const tagOf = getter(Symbol.toStringTag), bufferOf = getter('buffer'), offsetOf = getter('byteOffset'), lengthOf = getter('byteLength')
  const apply = Reflect.apply
  const U8 = Uint8Array
  const parseHex = parseInt
  const sliceText = String.prototype.slice
  const INTEGER_ARRAYS = Object.create(null)
  for (const name of ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array']) INTEGER_ARRAYS[name] = true
  const getRandomValues = function getRandomValues(array) {
    const tag = typeof array === 'object' && array !== null ? apply(tagOf, array, []) : undefined
    if (typeof tag !== 'string' || INTEGER_ARRAYS[tag] !== true) throw new TypeError('crypto.getRandomValues: expected an integer typed array')
    const length = apply(lengthOf, array, [])
    if (length > 65536) throw new RangeError('crypto.getRandomValues: at most 65536 bytes at a time, got ' + length)
    const bytes = new U8(apply(bufferOf, array, []), apply(offsetOf, array, []), length)
    let live
    for (let at = 0; at < length; at += 4) {
      const size = length - at < 4 ? length - at : 4
      const encoded = drawEncoded(BYTES, () => {
        if (live === undefined) live = hostRandom(length)
        return parseHex(apply(sliceText, live, [at * 2, (at + size) * 2]), 16)
      })
      // Out-of-range values only come from a mismatched tape, which the host refuses anyway.
      let chunk = -4 - encoded
      for (let i = size - 1; i >= 0; i--) {
        const low = chunk & 255
        bytes[at + i] = low
        chunk = (chunk - low) / 256
      }
    }
    return array
  }
  const cryptoObject = Object.freeze(Object.create(null, { getRandomValues: { value: getRandomValues, enumerable: true } }))
  const takeDraws = () => {
    if (drawn.length === 0 && !overflow && !mismatch) return undefined
    const text = JSON.stringify({ d: drawn, o: overflow, x: mismatch })
    drawn = []
    return text
  }
  const now = function now() { return draw(true) }
  const random = function random() { return draw(false) }
  const DateProxy = new Proxy(RealDate, {
    construct(target, args, newTarget) {
      return Reflect.construct(target, args.length === 0 ? [draw(true)] : args, newTarget)
    },
    apply(target, thisArg, args) {
      return String(new RealDate(draw(true)))
    },
  })
  Object.defineProperty(RealDate, 'now', { value: now, writable: false, enumerable: false, configurable: false })
  Object.defineProperty(Math, 'random', { value: random, writable: false, enumerable: false, configurable: false })
  Object.defineProperty(RealDate.prototype, 'constructor', { value: DateProxy, writable: false, enumerable: false, configurable: false })
  Object.defineProperty(G, 'Date', { value: DateProxy, writable: false, enumerable: false, configurable: false })
  const ObjectProto = Object.prototype
  const ArrayProto = Array.prototype
  const stringify = JSON.stringify
  const parse = JSON.parse
  const getProto = Object.getPrototypeOf
  const ownKeys = Reflect.ownKeys
  const describeProp = Object.getOwnPropertyDescriptor
  const isArray = Array.isArray
  const defineProperty = Object.defineProperty
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/

  // Not an Error subclass instance: QuickJS attaches an own 'stack' to real Error objects when they
  // are thrown, and a ToolCallError must carry only toolName and message. It still is instanceof Error.
  class ToolCallError {
    constructor(toolName, message) {
      defineProperty(this, 'toolName', { value: String(toolName), enumerable: true, writable: false, configurable: false })
      defineProperty(this, 'message', { value: String(message), enumerable: true, writable: false, configurable: false })
    }
  }
  Object.setPrototypeOf(ToolCallError.prototype, Error.prototype)
  defineProperty(ToolCallError.prototype, 'name', { value: 'ToolCallError', enumerable: false, writable: false, configurable: false })

  const keyPath = (path, key) => (IDENT.test(key) ? path + '.' + key : path + '[' + stringify(key) + ']')
  // Paths are built only on failure, from the chain of parent tasks.
  const pathOf = (task) => {
    const keys = []
    for (let at = task; at.parent !== undefined; at = at.parent) keys.push(at.key)
    let path = task.root
    for (let i = keys.length - 1; i >= 0; i--) path = typeof keys[i] === 'number' ? path + '[' + keys[i] + ']' : keyPath(path, keys[i])
    return path
  }
  const notJson = (task, what) => {
    throw new TypeError(pathOf(task) + ' ' + what + ' (only JSON values cross the sandbox boundary)')
  }

  function encode(root, rootPath) {
    const out = []
    let active
    const stack = [{ value: root, parent: undefined, key: undefined, root: rootPath }]
    while (stack.length > 0) {
      const task = stack.pop()
      if (typeof task === 'string') { out.push(task); continue }
      if (task.leave !== undefined) { active.delete(task.leave); continue }
      const value = task.value
      switch (typeof value) {
        case 'string': out.push(stringify(value)); continue
        case 'boolean': out.push(value ? 'true' : 'false'); continue
        case 'number':
          if (value !== value || value === Infinity || value === -Infinity) notJson(task, 'is ' + String(value) + ', not a finite number')
          out.push(value === 0 ? '0' : String(value)); continue
        case 'undefined': notJson(task, 'is undefined')
        case 'function': notJson(task, 'is a function')
        case 'symbol': notJson(task, 'is a symbol')
        case 'bigint': notJson(task, 'is a bigint')
      }
      if (value === null) { out.push('null'); continue }
      if (active === undefined) active = new Set()
      else if (active.has(value)) notJson(task, 'is a circular reference')
      const proto = getProto(value)
      const keys = ownKeys(value)
      if (isArray(value)) {
        if (proto !== ArrayProto) notJson(task, 'is an array with a custom prototype')
        const length = value.length
        if (keys.length !== length + 1) {
          for (const key of keys) {
            if (typeof key === 'symbol') notJson(task, 'has a symbol key')
            if (key !== 'length' && !(String(key >>> 0) === key && (key >>> 0) < length)) notJson({ parent: task, key, root: task.root }, 'is an extra key on an array')
          }
          notJson(task, 'is a sparse array')
        }
        active.add(value)
        stack.push({ leave: value }, ']')
        for (let index = length - 1; index >= 0; index--) {
          const desc = describeProp(value, index)
          if (desc === undefined) notJson({ parent: task, key: index, root: task.root }, 'is a hole in a sparse array')
          if (!('value' in desc)) notJson({ parent: task, key: index, root: task.root }, 'is an accessor property')
          stack.push({ value: desc.value, parent: task, key: index, root: task.root })
          if (index > 0) stack.push(',')
        }
        stack.push('[')
        continue
      }
      if (proto !== ObjectProto && proto !== null) {
        const name = proto && typeof proto.constructor === 'function' && typeof proto.constructor.name === 'string' ? proto.constructor.name : 'object'
        notJson(task, 'is a ' + (name || 'object') + ' instance, not a plain object')
      }
      active.add(value)
      stack.push({ leave: value }, '}')
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]
        if (typeof key === 'symbol') notJson(task, 'has a symbol key')
        const desc = describeProp(value, key)
        if (!('value' in desc)) notJson({ parent: task, key, root: task.root }, 'is an accessor property')
        if (!desc.enumerable) notJson({ parent: task, key, root: task.root }, 'is a non-enumerable property')
        stack.push({ value: desc.value, parent: task, key, root: task.root })
        stack.push((i > 0 ? ',' : '') + stringify(key) + ':')
      }
      stack.push('{')
    }
    return out.join('')
  }

  function describe(error) {
    try {
      if (error instanceof ToolCallError) return 'ToolCallError: ' + error.message + ' (tool ' + stringify(error.toolName) + ')'
      if (error instanceof Error) return String(error.name) + ': ' + String(error.message)
      if (typeof error === 'string') return 'Uncaught ' + stringify(error)
      try { const text = encode(error, 'thrown'); return 'Uncaught ' + text } catch (_) { return 'Uncaught ' + String(error) }
    } catch (_) {
      return 'Uncaught exception that could not be described'
    }
  }

  function formatValue(value) {
    if (typeof value === 'string') return value
    if (value instanceof Error) return String(value.name) + ': ' + String(value.message)
    switch (typeof value) {
      case 'undefined': return 'undefined'
      case 'function': return '[Function ' + (value.name || 'anonymous') + ']'
      case 'symbol': return String(value)
      case 'bigint': return String(value) + 'n'
      case 'number': return String(value)
    }
    try { return encode(value, 'value') } catch (_) {}
    try { const text = stringify(value); if (typeof text === 'string') return text } catch (_) {}
    try { return String(value) } catch (_) { return '[unprintable]' }
  }
  const format = (values) => values.map(formatValue).join(' ')
  const makeLogger = (level) => function () {
    const values = []
    for (let i = 0; i < arguments.length; i++) values.push(arguments[i])
    hostLog(level, format(values))
  }
  const consoleObject = Object.freeze({ log: makeLogger('log'), info: makeLogger('info'), warn: makeLogger('warn'), error: makeLogger('error'), debug: makeLogger('log') })

  const display = (name) => (IDENT.test(name) ? 'tools.' + name : 'tools[' + stringify(name) + ']')
  function call(name, argList) {
    let json
    try {
      json = encode(argList.length === 0 ? {} : argList[0], 'args')
    } catch (error) {
      return Promise.reject(new TypeError(display(name) + '(args): ' + error.message))
    }
    return hostCall(name, json, takeDraws()).then((text) => {
      const settled = parse(text)
      if (settled.ok) return settled.value
      throw new ToolCallError(settled.toolName, settled.message)
    })
  }
  const bindings = new Map()
  const tools = new Proxy(Object.create(null), {
    get(_target, key) {
      // 'then' keeps awaiting the proxy from dispatching; 'toJSON' keeps JSON.stringify(tools) inert.
      if (typeof key !== 'string' || key === 'then' || key === 'toJSON') return undefined
      let binding = bindings.get(key)
      if (binding === undefined) {
        binding = function () {
          const argList = []
          for (let i = 0; i < arguments.length; i++) argList.push(arguments[i])
          return call(key, argList)
        }
        bindings.set(key, binding)
      }
      return binding
    },
    set() { return false },
    defineProperty() { return false },
    deleteProperty() { return false },
    setPrototypeOf() { return false },
  })

  const blocked = function () { throw new EvalError('dynamic code evaluation (eval, Function) is disabled in the sandbox') }
  const constructors = [Function, (async function () {}).constructor, (function* () {}).constructor, (async function* () {}).constructor]
  for (const F of constructors) defineProperty(F.prototype, 'constructor', { value: blocked, writable: false, enumerable: false, configurable: false })
  defineProperty(G, 'Function', { value: blocked, writable: false, enumerable: false, configurable: false })
  defineProperty(G, 'eval', { value: blocked, writable: false, enumerable: false, configurable: false })
  defineProperty(G, 'tools', { value: tools, writable: false, enumerable: false, configurable: false })
  defineProperty(G, 'ToolCallError', { value: ToolCallError, writable: false, enumerable: false, configurable: false })
  defineProperty(G, 'console', { value: consoleObject, writable: false, enumerable: false, configurable: false })
  defineProperty(G, 'crypto', { value: cryptoObject, writable: false, enumerable: false, configurable: false })

  return function start(main) {
    let promise
    try {
      promise = main()
    } catch (error) {
      hostSettle('thrown', describe(error))
      return
    }
    Promise.resolve(promise).then(
      (value) => {
        let json
        try {
          json = encode(value === undefined ? null : value, 'result')
        } catch (error) {
          hostSettle('invalid', String(error.message))
          return
        }
        hostSettle('ok', json)
      },
      (error) => hostSettle('thrown', describe(error)),
    ).catch(() => hostSettle('thrown', 'InternalError: the program failed while reporting its outcome'))
  }
})`
