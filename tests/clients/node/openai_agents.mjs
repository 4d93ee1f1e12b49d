// The OpenAI Agents SDK for JS (`@openai/agents`), unchanged, through rxgem serve: an agent
// with function tools run in each of two user turns, the second from the first's history.
// Usage: node openai_agents.mjs chat|responses
//   chat: OpenAIChatCompletionsModel (/v1/chat/completions)
//   responses: OpenAIResponsesModel (/v1/responses, the SDK's defaults)

import {
  Agent,
  OpenAIChatCompletionsModel,
  OpenAIResponsesModel,
  run,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import OpenAI from "openai";
import { apiKey, baseURL, model, report, TOOLS, TURNS } from "./common.mjs";

setTracingDisabled(true); // nothing leaves 127.0.0.1

const [kind] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const models = {
  chat: () => new OpenAIChatCompletionsModel(client, model),
  responses: () => new OpenAIResponsesModel(client, model),
};
if (!(kind in models)) throw new Error(`unknown kind ${kind}`);

function agent(names) {
  return new Agent({
    name: "Travel",
    instructions: "Answer questions about cities with the tools.",
    model: models[kind](),
    tools: names.map((name) =>
      tool({
        name,
        description: TOOLS[name].description,
        parameters: TOOLS[name].parameters,
        strict: false,
        execute: async (input) => JSON.stringify(TOOLS[name].run(input)),
      }),
    ),
  });
}

let history = [];
const answers = [];
for (const { question, tools: names } of TURNS) {
  const result = await run(agent(names), [...history, { role: "user", content: question }]);
  answers.push(result.finalOutput);
  history = result.history;
}
report(answers);
