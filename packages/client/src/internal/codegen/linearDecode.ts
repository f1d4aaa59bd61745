/**
 * The model made linear to decode (docs/DESIGN.md, "Typed tools": linear decoding). Effect
 * decodes a union by trying its members in turn, each over the whole value: two members that
 * both descend into arrays (or objects), under a reference that repeats, double the work at
 * every level of the value. After this pass:
 *
 * - at most one member of a union descends into a given array or object: members are chosen by
 *   the value's JSON type, several objects by a key whose literal values tell them apart
 *   (`Choice`); members that nothing tells apart are merged into one that accepts what each
 *   accepted (noted `unchecked`);
 * - at most `maxAttempts` members are tried on one value, through every union and reference
 *   above it; past that, each JSON type is checked by one member (its own type, or its literal
 *   values), noted too.
 *
 * So each node of a value is tried a bounded number of times and descended into once: a decode
 * is linear in the value's size. Every rewrite is sound: the Schema accepts at least what it did.
 */
import {
  type Choice,
  components,
  type Definition,
  type Document,
  type Kind,
  kindOfValue,
  type Limits,
  maxNotes,
  maxProperties,
  type Node,
  type Note,
  pointerToken,
  type Primitive,
  type Property,
  type Ref,
  type Route
} from "./mapping.js"

/** The most members tried on one value, through the unions and references above it. */
const maxAttempts = 16

/** Literal values printed as `Schema.Literal` (tried one by one); more are one lookup in a `Set`. */
export const literalUnionMax = 8

/** Objects told apart by a key: past this many members, they are merged instead. */
const maxCases = 256

/**
 * Members of a union that may all descend into one value, tried in turn, kept as they are when
 * nothing below them could multiply the work again (`flat`); more are merged.
 */
const maxDescents = 4

const jsonKinds: ReadonlyArray<Kind> = ["null", "boolean", "number", "string", "array", "object"]

type Slot = Kind | "other"

const slots: ReadonlyArray<Slot> = [...jsonKinds, "other"]

/** What decoding a node does to one value, by its JSON type. */
interface Facts {
  /** The types of value it may accept (`other`: a value of no JSON type, which only `Unknown` takes). */
  readonly kinds: ReadonlySet<Slot>
  /** The arrays (`Array`, `Tuple`) and objects that may descend into a value, after any choice. */
  readonly arrays: ReadonlyArray<Node>
  readonly objects: ReadonlyArray<Node>
  /** The most members tried on one value of each type, that node included. */
  readonly attempts: Readonly<Record<Slot, number>>
}

const everyKind: ReadonlySet<Slot> = new Set(slots)

const attemptsOf = (n: number): Record<Slot, number> => ({ null: n, boolean: n, number: n, string: n, array: n, object: n, other: n })

const unknownNode: Node = { _tag: "Unknown", why: undefined }

/** The nodes a widening makes, each of which may say why (`Widened`). */
type Widenable = Exclude<Node, { readonly _tag: "Unknown" | "Never" | "Tuple" | "Union" | "Ref" }>

/** What accepts every value of `kind` and checks nothing more. */
const wide = (kind: Kind): Widenable => {
  switch (kind) {
    case "null":
      return { _tag: "Null" }
    case "boolean":
      return { _tag: "Boolean" }
    case "number":
      return { _tag: "Number", integer: false, checks: [] }
    case "string":
      return { _tag: "String", checks: [] }
    case "array":
      return { _tag: "Array", item: unknownNode, checks: [] }
    case "object":
      return { _tag: "Object", properties: [], additional: "open" }
  }
}

const union = (members: ReadonlyArray<Node>, path: string): Node => members.length === 1 ? members[0]! : { _tag: "Union", members, path }

/** The nodes right below `node`: an array's item, a tuple's elements and rest, an object's values and rest, a union's members. */
const childrenOf = (node: Node): ReadonlyArray<Node> => {
  switch (node._tag) {
    case "Array":
      return [node.item]
    case "Tuple":
      return node.rest === undefined ? node.elements : [...node.elements, node.rest]
    case "Object": {
      const values = node.properties.map((property) => property.node)
      if (typeof node.additional !== "string") values.push(node.additional)
      return values
    }
    case "Union":
    case "Choice":
      return node.members
    default:
      return []
  }
}

/** The references in `node`, not through the definitions they name. */
const refsIn = (node: Node, out: Array<Ref>): Array<Ref> => {
  if (node._tag === "Ref") out.push(node)
  else for (const child of childrenOf(node)) refsIn(child, out)
  return out
}

/**
 * Rewrites `document`'s root and definitions (in place: the definitions are the document's own)
 * and gives back the document with its notes.
 */
export const linearDecode = (document: Document, limits: Limits): Document => {
  const { definitions } = document
  const notes: Array<Note> = [...document.notes]
  const noted = new Set(notes.map((n) => `${n.kind} ${n.path} ${n.reason}`))
  const note = (path: string, reason: string) => {
    const key = `unchecked ${path} ${reason}`
    if (notes.length >= maxNotes || noted.has(key)) return
    noted.add(key)
    notes.push({ kind: "unchecked", path, reason })
  }

  // Definitions on a cycle of references: never inlined into a merge (it would never end).
  const cyclic = new Set<number>()
  for (const component of components(definitions, (ref) => !ref.broken)) {
    const only = component[0]!
    if (component.length > 1 || definitions[only]!.refs.some((ref) => !ref.broken && ref.def === only)) {
      for (const v of component) cyclic.add(v)
    }
  }

  const definitionFacts = new Array<Facts | undefined>(definitions.length)
  let factsCache = new WeakMap<object, Facts>()

  const facts = (node: Node): Facts => {
    // A reference reads its definition's facts each time: they change once it is rewritten.
    if (node._tag === "Ref") return computeFacts(node)
    const cached = factsCache.get(node)
    if (cached !== undefined) return cached
    const computed = computeFacts(node)
    factsCache.set(node, computed)
    return computed
  }

  const computeFacts = (node: Node): Facts => {
    switch (node._tag) {
      case "Unknown":
        return { kinds: everyKind, arrays: [], objects: [], attempts: attemptsOf(1) }
      case "Never":
        return { kinds: new Set(), arrays: [], objects: [], attempts: attemptsOf(1) }
      case "String":
        return { kinds: new Set(["string"]), arrays: [], objects: [], attempts: attemptsOf(1) }
      case "Number":
        return { kinds: new Set(["number"]), arrays: [], objects: [], attempts: attemptsOf(1) }
      case "Boolean":
        return { kinds: new Set(["boolean"]), arrays: [], objects: [], attempts: attemptsOf(1) }
      case "Null":
        return { kinds: new Set(["null"]), arrays: [], objects: [], attempts: attemptsOf(1) }
      case "Literal": {
        const n = node.values.length <= literalUnionMax ? Math.max(1, node.values.length) : 1
        return { kinds: new Set(node.values.map(kindOfValue)), arrays: [], objects: [], attempts: attemptsOf(n) }
      }
      case "Array":
      case "Tuple":
        return { kinds: new Set(["array"]), arrays: [node], objects: [], attempts: attemptsOf(1) }
      case "Object":
        return { kinds: new Set(["object"]), arrays: [], objects: [node], attempts: attemptsOf(1) }
      case "Ref": {
        if (node.broken) return facts(unknownNode)
        // Every definition a union can reach without an array or an object between is done
        // first (the order below); a reference under one is read once all are done. Not yet
        // known is taken as the worst: it descends, and fills the attempts.
        return definitionFacts[node.def] ?? {
          kinds: everyKind,
          arrays: [node],
          objects: [node],
          attempts: attemptsOf(maxAttempts)
        }
      }
      case "Union": {
        const kinds = new Set<Slot>()
        const arrays: Array<Node> = []
        const objects: Array<Node> = []
        const attempts = attemptsOf(0)
        for (const member of node.members) {
          const f = facts(member)
          for (const kind of f.kinds) kinds.add(kind)
          for (const array of f.arrays) arrays.push(array)
          for (const object of f.objects) objects.push(object)
          for (const slot of slots) attempts[slot] += f.attempts[slot]
        }
        return { kinds, arrays, objects, attempts }
      }
      case "Choice": {
        const kinds = new Set<Slot>()
        const attempts = attemptsOf(1)
        const routed = (slot: Slot): ReadonlyArray<number> =>
          slot === "object" && node.route.objects !== undefined
            ? [...node.route.objects.cases.map(([, i]) => i), ...(node.route.objects.absent === undefined ? [] : [node.route.objects.absent])]
            : node.route.kinds[slot] ?? []
        for (const slot of slots) {
          const members = [...new Set(routed(slot))].map((i) => facts(node.members[i]!))
          if (members.some((f) => f.kinds.has(slot))) kinds.add(slot)
          for (const f of members) attempts[slot] += f.attempts[slot]
        }
        const arrays = [...new Set(routed("array"))].flatMap((i) => facts(node.members[i]!).arrays)
        const objects = [...new Set(routed("object"))].flatMap((i) => facts(node.members[i]!).objects)
        return { kinds, arrays, objects, attempts }
      }
    }
  }

  const maxAttemptsOf = (f: Facts) => Math.max(...slots.map((slot) => f.attempts[slot]))

  /** The node a chain of references leads to, and whether it passed through a definition on a cycle. */
  const resolved = (node: Node): { readonly node: Node; readonly throughCycle: boolean } => {
    let throughCycle = false
    for (let hops = 0; node._tag === "Ref" && !node.broken && hops <= definitions.length; hops++) {
      if (cyclic.has(node.def)) throughCycle = true
      node = definitions[node.def]!.node
    }
    return { node, throughCycle }
  }

  const literalOf = (node: Node): ReadonlyArray<Primitive> | undefined => {
    const target = resolved(node).node
    return target._tag === "Literal" && target.values.length > 0 ? target.values : undefined
  }

  const propertyIndex = new WeakMap<object, Map<string, Property>>()
  const propertyOf = (object: Node & { readonly _tag: "Object" }, key: string): Property | undefined => {
    let index = propertyIndex.get(object)
    if (index === undefined) {
      index = new Map(object.properties.map((property) => [property.key, property]))
      propertyIndex.set(object, index)
    }
    return index.get(key)
  }

  /**
   * A key whose literal values tell `members` apart as objects: every object each may descend
   * into has it, with literal values, and no value belongs to two members; at most one member
   * takes an object without it.
   */
  const discriminate = (members: ReadonlyArray<Node>): NonNullable<Route["objects"]> | undefined => {
    const containers = members.map((member) => facts(member).objects)
    const first = containers[0]?.[0]
    if (first === undefined || first._tag !== "Object") return undefined
    const candidates = first.properties.filter((property) => literalOf(property.node) !== undefined).slice(0, 16)
    for (const { key } of candidates) {
      const owner = new Map<Primitive, number>()
      const cases: Array<readonly [Primitive, number]> = []
      let absent: number | undefined
      let apart = true
      for (const [j, objects] of containers.entries()) {
        let takesAbsent = false
        for (const object of objects) {
          if (object._tag !== "Object") {
            apart = false
            break
          }
          const property = propertyOf(object, key)
          if (property === undefined) {
            // An object that does not name the key takes it only when it takes any key.
            if (object.additional === "closed") takesAbsent = true
            else apart = false
            continue
          }
          const values = literalOf(property.node)
          if (values === undefined) {
            apart = false
            break
          }
          if (property.optional) takesAbsent = true
          for (const value of values) {
            const seen = owner.get(value)
            if (seen !== undefined && seen !== j) apart = false
            if (seen === undefined) {
              owner.set(value, j)
              cases.push([value, j])
            }
          }
        }
        if (takesAbsent) {
          if (absent !== undefined) apart = false
          absent = j
        }
        if (!apart) break
      }
      if (apart) return { key, cases, absent }
    }
    return undefined
  }

  /** The members of a union that may descend into a value of `kind`. */
  const descendingOn = (kind: "array" | "object", members: ReadonlyArray<Node>) =>
    members.filter((member) => (kind === "array" ? facts(member).arrays : facts(member).objects).length > 0)

  /** Whether a union may descend into one value with several members, nothing telling them apart. */
  const multiplies = (members: ReadonlyArray<Node>): boolean =>
    (["array", "object"] as const).some((kind) => {
      const descending = descendingOn(kind, members)
      return descending.length > 1 && !(kind === "object" && descending.length <= maxCases && discriminate(descending) !== undefined)
    })

  const flatMembers = (node: Node & { readonly members: ReadonlyArray<Node> }): ReadonlyArray<Node> =>
    node.members.flatMap((member) => member._tag === "Union" ? flatMembers(member) : [member])

  /** The definitions whose node (or a definition it refers to) holds a union that `multiplies`. */
  const multiplying = new Set<number>()

  const flatCache = new WeakMap<object, boolean>()
  /**
   * Whether no union below `node` (through its references too) multiplies: a union over such
   * members descends into a value at most once per member, and nothing below multiplies it again.
   */
  const flat = (node: Node): boolean => {
    if (node._tag === "Ref") return node.broken || !multiplying.has(node.def)
    const cached = flatCache.get(node)
    if (cached !== undefined) return cached
    const result = !(node._tag === "Union" && multiplies(flatMembers(node))) && childrenOf(node).every(flat)
    flatCache.set(node, result)
    return result
  }

  /** One array or object accepting what each of `members` accepts as one, or the widest of `kind`. */
  const merge = (kind: "array" | "object", members: ReadonlyArray<Node>, path: string): Widenable => {
    const targets: Array<Node> = []
    for (const member of members) {
      const { node, throughCycle } = resolved(member)
      if (throughCycle || node._tag !== (kind === "array" ? "Array" : "Object")) return wide(kind)
      targets.push(node)
    }
    if (kind === "array") {
      const arrays = targets as ReadonlyArray<Node & { readonly _tag: "Array" }>
      const items = dedupe(arrays.map((array) => array.item))
      // The checks every member has: what the merged array may still check.
      const shared = arrays[0]!.checks.filter((check) => arrays.every((other) => other.checks.some((c) => JSON.stringify(c) === JSON.stringify(check))))
      limits.nodesLeft -= 1
      return { _tag: "Array", item: union(items, `${path}/items`), checks: shared }
    }
    const objects = targets as ReadonlyArray<Node & { readonly _tag: "Object" }>
    const keys: Array<string> = []
    const seen = new Set<string>()
    for (const object of objects) {
      for (const property of object.properties) {
        if (!seen.has(property.key)) {
          seen.add(property.key)
          keys.push(property.key)
        }
      }
    }
    limits.nodesLeft -= keys.length + 1
    if (keys.length > maxProperties || limits.nodesLeft < 0) return wide("object")
    const properties = keys.map((key): Property => {
      const values: Array<Node> = []
      let optional = false
      let described: Property | undefined
      for (const object of objects) {
        const property = propertyOf(object, key)
        if (property !== undefined) {
          values.push(property.node)
          optional ||= property.optional
          described ??= property
          continue
        }
        // An object without the key: it takes the key with what its other keys take.
        optional = true
        if (object.additional === "open") values.push(unknownNode)
        else if (object.additional !== "closed") values.push(object.additional)
      }
      return {
        key,
        node: union(dedupe(values), `${path}/properties/${pointerToken(key)}`),
        optional,
        description: described?.description,
        default: described?.default
      }
    })
    const rests = objects.map((object) => object.additional)
    const additional = rests.includes("open")
      ? "open"
      : (() => {
        const nodes = dedupe(rests.filter((rest): rest is Node => rest !== "closed"))
        return nodes.length === 0 ? "closed" : union(nodes, `${path}/additionalProperties`)
      })()
    return { _tag: "Object", properties, additional }
  }

  /** The members without repeats: the same node, or references to the same definition. */
  const dedupe = (members: ReadonlyArray<Node>): Array<Node> => {
    const out: Array<Node> = []
    const nodes = new Set<Node>()
    const defs = new Set<number>()
    for (const member of members) {
      if (nodes.has(member)) continue
      if (member._tag === "Ref" && !member.broken) {
        if (defs.has(member.def)) continue
        defs.add(member.def)
      }
      nodes.add(member)
      out.push(member)
    }
    return out
  }

  /** A Choice over `members`: by JSON type, the members that may take it; `fixed` where one was chosen. */
  const choice = (members: ReadonlyArray<Node>, fixed: ReadonlyMap<Kind, Node>, objects: Route["objects"]): Choice => {
    const kinds: { [K in Slot]?: ReadonlyArray<number> } = {}
    for (const slot of slots) {
      if (slot === "object" && objects !== undefined) continue
      const chosen = slot === "other" ? undefined : fixed.get(slot)
      const indices = chosen !== undefined
        ? [members.indexOf(chosen)]
        : members.flatMap((member, i) => facts(member).kinds.has(slot) ? [i] : [])
      if (indices.length > 0) kinds[slot] = indices
    }
    return { _tag: "Choice", members, route: { kinds, objects } }
  }

  /** Each JSON type checked once: by its own type, or by the literal values of it the members list. */
  const byType = (members: ReadonlyArray<Node>, path: string): Node => {
    const kinds = new Set<Slot>()
    for (const member of members) for (const kind of facts(member).kinds) kinds.add(kind)
    if (jsonKinds.every((kind) => kinds.has(kind))) return unknownNode
    note(
      path,
      `anyOf, oneOf: more than ${maxAttempts} tries for one value; each JSON type is checked once (its type, or its literal values), the members' other keywords are not checked`
    )
    const out: Array<Widenable> = []
    for (const kind of jsonKinds) {
      if (!kinds.has(kind)) continue
      const taking = members.filter((member) => facts(member).kinds.has(kind))
      const literals = taking.every((member) => member._tag === "Literal")
        ? taking.flatMap((member) => member._tag === "Literal" ? member.values.filter((value) => kindOfValue(value) === kind) : [])
        : undefined
      out.push(literals === undefined ? wide(kind) : { _tag: "Literal", values: [...new Set(literals)] })
    }
    const widened = `anyOf of more than ${maxAttempts} tries for one value: each JSON type checked once`
    return out.length === 1 ? { ...out[0]!, widened } : { ...choice(out, new Map(), undefined), widened }
  }

  /** A union of normalized members made linear. */
  const resolve = (given: ReadonlyArray<Node>, path: string): Node => {
    const spread: Array<Node> = []
    for (const member of given) {
      for (const one of member._tag === "Union" ? member.members : [member]) {
        if (one._tag !== "Never") spread.push(one)
      }
    }
    let members = dedupe(spread)
    // Literals in one: the same values, one lookup (exact).
    const literals = members.filter((member): member is Node & { readonly _tag: "Literal" } => member._tag === "Literal")
    if (literals.length > 1) {
      const merged: Node = { _tag: "Literal", values: [...new Set(literals.flatMap((literal) => literal.values))] }
      members = members.flatMap((member): Array<Node> => member === literals[0] ? [merged] : member._tag === "Literal" ? [] : [member])
    }
    const anything = members.find((member) => member._tag === "Unknown" || (member._tag === "Ref" && member.broken))
    if (anything !== undefined) return anything
    if (members.length === 0) return { _tag: "Never" }
    if (members.length === 1) return members[0]!

    const fixed = new Map<Kind, Node>()
    let objects: Route["objects"]
    for (const kind of ["array", "object"] as const) {
      const descending = descendingOn(kind, members)
      if (descending.length <= 1) continue
      if (kind === "object" && descending.length <= maxCases) {
        objects = discriminate(descending)
        if (objects !== undefined) {
          // Cases name the members by their place in `descending`: now by their place among all.
          const place = descending.map((member) => members.indexOf(member))
          objects = {
            key: objects.key,
            cases: objects.cases.map(([value, j]) => [value, place[j]!] as const),
            absent: objects.absent === undefined ? undefined : place[objects.absent]
          }
          continue
        }
      }
      // Tried in turn: a few members, below which nothing multiplies the work again.
      if (descending.length <= maxDescents && descending.every(flat)) continue
      note(
        path,
        `anyOf, oneOf: the members that may be ${
          kind === "array" ? "arrays" : "objects"
        } are merged into one, decoded in one pass (which member matched is not checked)`
      )
      const merged: Node = {
        ...merge(kind, descending, path),
        widened: `anyOf members merged into one ${kind === "array" ? "array" : "object"}, decoded in one pass`
      }
      const next: Array<Node> = []
      const mergedAway = new Set(descending)
      let placed = false
      for (const member of members) {
        if (!mergedAway.has(member)) next.push(member)
        else {
          if (!placed) next.push(merged)
          placed = true
          // A member that takes other values too stays for them; the merged one takes this kind.
          if ([...facts(member).kinds].some((k) => k !== kind)) next.push(member)
        }
      }
      members = next
      fixed.set(kind, merged)
    }
    const needsChoice = objects !== undefined ||
      [...fixed].some(([kind, chosen]) => members.some((member) => member !== chosen && facts(member).kinds.has(kind)))
    let result: Node = needsChoice ? choice(members, fixed, objects) : { _tag: "Union", members, path }
    if (maxAttemptsOf(facts(result)) > maxAttempts && result._tag === "Union") result = choice(members, fixed, objects)
    if (maxAttemptsOf(facts(result)) > maxAttempts) result = byType(members, path)
    return result
  }

  /** Whether a union in `node` (not through its references) multiplies. */
  const holdsMultiplying = (node: Node): boolean => (node._tag === "Union" && multiplies(flatMembers(node))) || childrenOf(node).some(holdsMultiplying)

  /** The unions of `node` above its first arrays and objects, made linear. */
  const top = (node: Node): Node => node._tag === "Union" ? resolve(node.members.map(top), node.path) : node

  /** Every union of `node`, made linear. */
  const deep = (node: Node): Node => {
    const t = top(node)
    switch (t._tag) {
      case "Array":
        return { ...t, item: deep(t.item) }
      case "Tuple":
        return { ...t, elements: t.elements.map(deep), rest: t.rest === undefined ? undefined : deep(t.rest) }
      case "Object":
        return {
          ...t,
          properties: t.properties.map((property) => ({ ...property, node: deep(property.node) })),
          additional: typeof t.additional === "string" ? t.additional : deep(t.additional)
        }
      case "Union":
        return { ...t, members: t.members.map(deep) }
      case "Choice":
        return { ...t, members: t.members.map(deep) }
      default:
        return t
    }
  }

  // The definitions in an order where each comes after those its unions refer to without an
  // array or an object between (they form no cycle: `mapping.ts` breaks those), so that each
  // union reads the facts of its references.
  const order = components(definitions, (ref) => !ref.guarded && !ref.broken)
  // First, as mapped: which definitions hold a union that multiplies, and those that refer to them.
  for (const component of order) for (const v of component) definitionFacts[v] = facts(definitions[v]!.node)
  const referrers = definitions.map((): Array<number> => [])
  const pending: Array<number> = []
  for (const [v, definition] of definitions.entries()) {
    for (const ref of definition.refs) if (!ref.broken) referrers[ref.def]!.push(v)
    if (holdsMultiplying(definition.node)) pending.push(v)
  }
  for (let v = pending.pop(); v !== undefined; v = pending.pop()) {
    if (multiplying.has(v)) continue
    multiplying.add(v)
    for (const referrer of referrers[v]!) pending.push(referrer)
  }
  factsCache = new WeakMap()
  // Then the unions above the first array or object of each definition, in that order; then every union below.
  for (const component of order) {
    for (const v of component) {
      const definition: Definition = definitions[v]!
      definition.node = top(definition.node)
      definitionFacts[v] = facts(definition.node)
    }
  }
  const root = deep(top(document.root))
  for (const definition of definitions) {
    definition.node = deep(definition.node)
    definition.refs = refsIn(definition.node, [])
  }
  return { root, definitions, notes }
}
