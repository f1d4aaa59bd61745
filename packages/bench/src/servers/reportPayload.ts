/**
 * The `report` tool's realistic output schema and ~1 KB result, shared by the progress server
 * and the output-check bench (no side effects: importing it starts nothing).
 */
export const outputSchema = {
  type: "object",
  properties: {
    id: { type: "string", pattern: "^[a-z0-9-]{8,64}$" },
    title: { type: "string", minLength: 1, maxLength: 200 },
    status: { type: "string", enum: ["open", "closed", "pending", "archived"] },
    createdAt: { type: "string", format: "date-time" },
    score: { type: "number", minimum: 0, maximum: 100 },
    tags: { type: "array", items: { type: "string", maxLength: 40 }, maxItems: 20, uniqueItems: true },
    author: {
      type: "object",
      properties: { name: { type: "string" }, email: { type: "string", format: "email" } },
      required: ["name"],
      additionalProperties: false
    },
    items: {
      type: "array",
      items: {
        type: "object",
        properties: {
          sku: { type: "string", pattern: "^[A-Z]{3}-[0-9]{4}$" },
          qty: { type: "integer", minimum: 1 },
          price: { type: "number", exclusiveMinimum: 0 }
        },
        required: ["sku", "qty", "price"],
        additionalProperties: false
      }
    }
  },
  required: ["id", "title", "status", "createdAt", "items"],
  additionalProperties: false
}

export const structuredContent = {
  id: "order-7f3a9c21",
  title: "Quarterly restock for the north warehouse",
  status: "pending",
  createdAt: "2025-06-01T12:34:56Z",
  score: 87.5,
  tags: ["restock", "north", "q3", "priority", "bulk"],
  author: { name: "Ada Lovelace", email: "ada@example.com" },
  items: Array.from({ length: 9 }, (_, i) => ({ sku: `ABC-${1000 + i}`, qty: i + 1, price: 9.99 + i }))
}
