/**
 * A JSON value with every string in it, keys included, passed through `redact`: how a tool's
 * result is cleared of the source's configured secrets before the model reads it
 * (docs/DESIGN.md, "AI toolkits"). A copy, built with an explicit stack: no walk over a
 * server's data may overflow the stack, whatever its depth. Own keys stay own keys (a
 * `__proto__` key is a property of the copy, never its prototype), in their order.
 */

const define = (target: object, key: string, value: unknown): void => {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

export const redactJson = (value: unknown, redact: (text: string) => string): unknown => {
  const root: { value: unknown } = { value: undefined }
  const stack: Array<{ readonly from: unknown; readonly into: object; readonly key: string }> = [{ from: value, into: root, key: "value" }]
  while (stack.length > 0) {
    const { from, into, key } = stack.pop()!
    if (typeof from === "string") {
      define(into, key, redact(from))
    } else if (Array.isArray(from)) {
      const copy: Array<unknown> = new Array(from.length)
      define(into, key, copy)
      for (let i = from.length - 1; i >= 0; i--) stack.push({ from: from[i], into: copy, key: String(i) })
    } else if (typeof from === "object" && from !== null) {
      const copy = {}
      define(into, key, copy)
      const keys = Object.keys(from)
      const redacted = keys.map(redact)
      // Defined now, in order; each value replaces its placeholder when its turn comes.
      for (const name of redacted) define(copy, name, undefined)
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ from: (from as Record<string, unknown>)[keys[i]!], into: copy, key: redacted[i]! })
    } else {
      define(into, key, from)
    }
  }
  return root.value
}
