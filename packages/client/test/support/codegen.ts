/**
 * Generated modules of typed tools, in process: transpiled (the TypeScript compiler's syntax
 * diagnostics are failures) and evaluated with `effect` as their one import, so a test can decode
 * with the Schemas they export; and type-checked, several in one program.
 */
import * as Effect from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

/** The syntax errors of a module's source (none: it parses as TypeScript). */
export const syntaxErrors = (source: string): ReadonlyArray<string> => {
  const out = ts.transpileModule(source, {
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 }
  })
  return (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
}

/** The kinds of the module's top-level statements, and the names it exports. */
export const topLevel = (source: string) => {
  const file = ts.createSourceFile("generated.ts", source, ts.ScriptTarget.ES2022, true)
  const kinds = new Set<string>()
  const exported: Array<string> = []
  for (const statement of file.statements) {
    kinds.add(
      ts.isImportDeclaration(statement)
        ? "import"
        : ts.isVariableStatement(statement)
        ? "const"
        : ts.isTypeAliasDeclaration(statement)
        ? "type"
        : `other: ${statement.getText(file).slice(0, 80)}`
    )
    if (ts.isVariableStatement(statement) && statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      for (const declaration of statement.declarationList.declarations) exported.push(declaration.name.getText(file))
    }
  }
  return { kinds, exported }
}

/** The module's exports, evaluated (CommonJS, `require("effect")` only). */
export const evaluate = (source: string): Record<string, unknown> => {
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 }
  })
  const exports: Record<string, unknown> = {}
  const require = (id: string) => {
    if (id === "effect") return Effect
    throw new Error(`unexpected import ${id}`)
  }
  new Function("exports", "require", outputText)(exports, require)
  return exports
}

const repository = fileURLToPath(new URL("../../../../", import.meta.url))

/**
 * The compiler's diagnostics of each of `files` (generated modules), type-checked together in one
 * program under tsconfig.base.json, `@phasebound/client` being this package's sources. Only the
 * given files are checked (and the program's global diagnostics, on the first of them): what
 * they import is read for its types, not checked again.
 */
export const typeCheck = (files: ReadonlyArray<string>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const config = ts.readConfigFile(path.join(repository, "tsconfig.base.json"), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, repository)
  const compilerOptions: ts.CompilerOptions = {
    ...options,
    noEmit: true,
    baseUrl: repository,
    paths: { "@phasebound/client": ["packages/client/src/index.ts"] }
  }
  const generated = new Set(files.map((file) => path.resolve(file)))
  const program = ts.createProgram([...generated], compilerOptions)
  const text = (d: ts.Diagnostic) =>
    `${d.file === undefined ? "" : `${path.basename(d.file.fileName)}: `}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map(text)
  const out = new Map<string, ReadonlyArray<string>>()
  for (const [i, file] of [...generated].entries()) {
    const source = program.getSourceFile(file)
    if (source === undefined) throw new Error(`not in the program: ${file}`)
    out.set(file, [...(i === 0 ? global : []), ...[...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(text)])
  }
  return out
}
