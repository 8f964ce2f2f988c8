/** Output-schema property shared by the tools that return `diff` cards (`FileDiff[]`). */
export const fileDiffsSpec = {
  type: 'array',
  required: true,
  items: {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: { type: 'string', required: true },
      oldText: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
      newText: { type: 'string', required: true },
    },
  },
} as const
