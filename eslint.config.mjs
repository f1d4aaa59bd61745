// ESLint for the workspace after Effect's own configuration (docs/CONTRIBUTING.md, "Lint, format and docs"):
// ESLint's and typescript-eslint's recommended rules, rules of Effect's, and dprint (through
// @effect/eslint-plugin's `dprint` rule) as the formatter: `npm run format` formats every file.
import * as effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import globals from "globals"
import tseslint from "typescript-eslint"

/** dprint's options: Effect's, with the line width and the orderings this codebase has. */
const dprint = {
  indentWidth: 2,
  lineWidth: 160,
  semiColons: "asi",
  quoteStyle: "alwaysDouble",
  trailingCommas: "never",
  operatorPosition: "maintain",
  "arrowFunction.useParentheses": "force",
  preferSingleLine: false,
  "module.sortImportDeclarations": "maintain",
  "module.sortExportDeclarations": "maintain",
  "importDeclaration.sortNamedImports": "maintain",
  "exportDeclaration.sortNamedExports": "maintain"
}

export default defineConfig(
  {
    // Build outputs, docgen's output, coverage, scratch and measurement files.
    ignores: ["**/dist/**", "**/docs/**", "**/coverage/**", "**/.tmp/**", "bench/results/**", "packages/*/test/.generated/**"]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  effect.configs.dprint,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: globals.node
    },
    linterOptions: {
      reportUnusedDisableDirectives: "error"
    },
    rules: {
      "@effect/dprint": ["error", { config: dprint }],
      "object-shorthand": "error",
      // A spread of a long array into arguments overflows the stack.
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='push'] > SpreadElement.arguments",
          message: "Do not use spread arguments in Array.push"
        }
      ],
      // tsc's noFallthroughCasesInSwitch already refuses a case that falls through.
      "no-fallthrough": "off",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      // `interface X extends Schema.Schema.Type<typeof X> {}` names a Schema's type.
      "@typescript-eslint/no-empty-object-type": "off",
      // On in the packages' sources (below); tests, measurements and programs read raw JSON.
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }]
    }
  },
  {
    files: ["packages/{client,testkit,workflow,promise,cli}/src/**"],
    rules: {
      "@typescript-eslint/no-explicit-any": "error"
    }
  },
  {
    // The published libraries import each Effect module by its path, never the barrel.
    files: ["packages/{client,workflow,promise}/src/**"],
    rules: {
      "@effect/no-import-from-barrel-package": ["error", { packageNames: ["effect", "@effect/platform", "@effect/platform-node"] }]
    }
  },
  {
    // Tests match control characters on purpose: to prove they were taken out.
    files: ["packages/*/test/**"],
    rules: {
      "no-control-regex": "off"
    }
  }
)
