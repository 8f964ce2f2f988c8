// toolgate/testing: test doubles for an agent — a scripted model and fake provider servers.
export {
  type FakeProvider,
  type FakeProviderOptions,
  type FakeProviderRequest,
  startFakeProvider,
} from './fake-provider.js'
export type { ScriptedToolCall, ScriptedTurn, ScriptedTurnObject, ScriptedUsage } from './script.js'
export { type ScriptedModel, type ScriptedModelOptions, scriptedModel } from './scripted-model.js'
