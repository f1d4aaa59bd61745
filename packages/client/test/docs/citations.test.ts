/**
 * Every citation of a document's section resolves: a comment or a document that says
 * `docs/DESIGN.md, "Errors"` (or `DESIGN.md "Errors"`, `README, "The Effect API"`,
 * `docs/TESTING.md, "Tiers"`) names a file that has a heading with exactly that text
 * (docs/CONTRIBUTING.md, "Documentation"). A citation may wrap onto the next comment line. And
 * every relative link of the README and the documents names a file that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../../", import.meta.url))

/** Where citations are read: every package's sources, tests and examples, and the documents. */
const scanned = (): ReadonlyArray<string> => {
  const files: Array<string> = []
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      if (entry === "node_modules" || entry === "dist" || entry.startsWith(".")) continue
      const path = join(dir, entry)
      if (statSync(path).isDirectory()) walk(path)
      else if (/\.(ts|mts|mjs|md)$/.test(entry)) files.push(path)
    }
  }
  for (const pkg of readdirSync(join(root, "packages"))) {
    for (const part of ["src", "test", "examples", "program", "README.md"]) {
      const path = join(root, "packages", pkg, part)
      if (!existsSync(path)) continue
      if (statSync(path).isDirectory()) walk(path)
      else files.push(path)
    }
  }
  walk(join(root, "docs"))
  files.push(join(root, "README.md"))
  return files
}

// A document (an optional path, an upper-case name, `.md` or the bare `README`), an optional
// `,` or `:`, then the section in double quotes; between them spaces, or a line break and the
// next comment line's `*` or `//`.
const citation = /((?:[\w.-]+\/)*(?:[A-Z][A-Z_]*\.md|README))[,:]?(?:[ \t]+|[ \t]*\n[ \t]*(?:\*|\/\/)?[ \t]*)"([^"\n]+)"/g

/** In code, only comments cite (a string argument beside a `README` constant is no citation); documents are all text. */
const inComment = (text: string, index: number): boolean => {
  const line = text.slice(text.lastIndexOf("\n", index) + 1, index)
  return /^\s*(\*|\/\*|\/\/)/.test(line) || line.includes("//")
}

/** The file a cited name means: a path from the root, else docs/ or the root for a bare name. */
const documentOf = (name: string): string | undefined => {
  const file = name.endsWith(".md") ? name : `${name}.md`
  const candidates = file.includes("/") ? [file] : [join("docs", file), file]
  return candidates.map((candidate) => join(root, candidate)).find((path) => existsSync(path))
}

/** The text of every heading of a Markdown file, outside fenced code. */
const headingsOf = (path: string): ReadonlySet<string> => {
  const headings = new Set<string>()
  let fenced = false
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line.startsWith("```")) fenced = !fenced
    const heading = fenced ? null : /^#{1,6}\s+(.+?)\s*$/.exec(line)
    if (heading !== null) headings.add(heading[1]!)
  }
  return headings
}

interface Citation {
  readonly at: string
  readonly document: string
  readonly section: string
}

const citations = (): ReadonlyArray<Citation> =>
  scanned().flatMap((file) => {
    const text = readFileSync(file, "utf8")
    return [...text.matchAll(citation)]
      .filter((match) => file.endsWith(".md") || inComment(text, match.index))
      .map((match) => ({
        at: `${relative(root, file)}:${text.slice(0, match.index).split("\n").length}`,
        document: match[1]!,
        section: match[2]!
      }))
  })

describe("citations of document sections", () => {
  const found = citations()

  it("reads the citations of the sources, tests and documents", () => {
    // The pattern finds what the code cites: a change that breaks it must not pass for zero citations.
    expect(found.length).toBeGreaterThan(150)
    expect(found).toContainEqual(expect.objectContaining({ document: "docs/DESIGN.md", section: "Errors" }))
  })

  it("each names a document that exists and a heading of it", () => {
    const headings = new Map<string, ReadonlySet<string>>()
    const unresolved = found.flatMap(({ at, document, section }) => {
      const path = documentOf(document)
      if (path === undefined) return [`${at}: ${document} (no such document)`]
      if (!headings.has(path)) headings.set(path, headingsOf(path))
      return headings.get(path)!.has(section) ? [] : [`${at}: ${document}, "${section}"`]
    })
    expect(unresolved).toEqual([])
  })

  it("each relative link of the README and the documents names a file that exists", () => {
    const documents = [join(root, "README.md"), ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).map((name) => join(root, "docs", name))]
    const links = documents.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => ({ file, target: match[1]! }))
        .filter(({ target }) => !/^[a-z]+:/.test(target))
    )
    expect(links.length).toBeGreaterThan(20)
    const broken = links
      .filter(({ file, target }) => !existsSync(join(dirname(file), target)))
      .map(({ file, target }) => `${relative(root, file)}: ${target}`)
    expect(broken).toEqual([])
  })
})
