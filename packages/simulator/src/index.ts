export { startSimulator } from "./start-simulator";
export { createSimulatorFetch, type SimulatorFetch } from "./create-simulator-fetch";
export { countPromptTokens, MEDIA_TOKENS, MESSAGE_OVERHEAD_TOKENS } from "./count-prompt-tokens";
export { countTextTokens } from "./count-text-tokens";
export { INVALID_KEY } from "./check-auth";
export { CHAT_VARIANTS } from "./render-chat";
export { MESSAGES_VARIANTS } from "./render-messages";
export { REPLAYS, type ReplayName } from "./replay-fixture";
export type { CapturedRequest, Protocol, Simulator, SimulatorOptions } from "./simulator-options";
