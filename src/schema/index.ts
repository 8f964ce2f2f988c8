export type {
  AudioContentBlock,
  ContentAnnotations,
  ContentBlock,
  ContentBlockExtras,
  ContentIcon,
  ContentMeta,
  EmbeddedBlobResource,
  EmbeddedResourceContentBlock,
  EmbeddedTextResource,
  ImageContentBlock,
  ResourceLinkContentBlock,
  TextContentBlock,
  UserMessage,
} from '../contract/content.js'
export type { JsonSchemaNode, JsonSchemaScalar, JsonSchemaType, ObjectJsonSchema } from '../contract/json-schema.js'
export type {
  ToolAnnotations,
  ToolDefinition,
  ToolMeta,
  ToolOutputDefinition,
  ToolResult,
  ToolSchema,
} from '../contract/tool-definition.js'
export {
  assertObjectJsonSchema,
  assertSupportedJsonSchema,
  collectJsonSchemaIssues,
  isKnownSupportedJsonSchema,
  JSON_SCHEMA_TYPES,
} from './assert.js'
export { parameterSchemaSpecToJsonSchema, valueSchemaSpecToJsonSchema } from './compile.js'
export type {
  ArgsOfSchema,
  DefineToolOutput,
  DefineToolSpec,
  OutputSchemaInput,
  ParametersInput,
  ToolArgsOf,
  ToolValueOf,
  TypedToolDefinition,
  ValueOfSchema,
} from './define-tool.js'
export { defineTool } from './define-tool.js'
export { JsonSchemaError, ToolArgsError, ToolOutputError } from './errors.js'
export type { InferArgs, InferValue } from './infer.js'
export type {
  ArrayValueSchemaSpec,
  BooleanValueSchemaSpec,
  IntegerValueSchemaSpec,
  JsonValueSchemaSpec,
  NullValueSchemaSpec,
  NumberValueSchemaSpec,
  ObjectPropertySpec,
  ObjectValueSchemaSpec,
  OneOfValueSchemaSpec,
  ParameterPropertySpec,
  ParameterSchemaSpec,
  SchemaSpecAnnotations,
  StringValueSchemaSpec,
  ValueSchemaSpec,
} from './spec.js'
export type { InferStandardOutput, StandardJsonSchema } from './standard-schema.js'
export { getArgsValidator, validateArgs } from './validate-args.js'
export type { CompiledJsonSchemaValidator } from './validator.js'
export { getJsonSchemaValidator, validateJsonSchemaValue } from './validator.js'
