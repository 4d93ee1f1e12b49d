// Vercel's AI SDK (`ai`), unchanged, through rxgem serve: a tool loop (stopWhen) in each of
// two user turns, the second sending the first turn's messages back as history.
// Usage: node vercel_ai.mjs chat|responses|compatible generate|stream
//   chat: openai.chat(...)            (@ai-sdk/openai, /v1/chat/completions)
//   responses: openai.responses(...)  (@ai-sdk/openai, /v1/responses, store: false: stateless)
//   compatible: @ai-sdk/openai-compatible's chat model

import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { apiKey, baseURL, model, report, TOOLS, TURNS } from "./common.mjs";

const [kind, how] = process.argv.slice(2);

function languageModel() {
  if (kind === "compatible") {
    return createOpenAICompatible({ name: "rxgem", baseURL, apiKey })(model);
  }
  const openai = createOpenAI({ baseURL, apiKey });
  if (kind === "chat") return openai.chat(model);
  if (kind === "responses") return openai.responses(model);
  throw new Error(`unknown kind ${kind}`);
}

const settings = {
  model: languageModel(),
  stopWhen: stepCountIs(5),
  maxRetries: 0,
  providerOptions: kind === "responses" ? { openai: { store: false } } : {},
};

function tools(names) {
  const offered = {};
  for (const name of names) {
    const { description, parameters, run } = TOOLS[name];
    offered[name] = tool({
      description,
      inputSchema: jsonSchema(parameters),
      execute: async (input) => run(input),
    });
  }
  return offered;
}

async function turn(messages, names) {
  const options = { ...settings, tools: tools(names), messages };
  if (how === "generate") {
    const result = await generateText(options);
    return [result.text, result.responseMessages];
  }
  if (how !== "stream") throw new Error(`unknown way ${how}`);
  let failure;
  const result = streamText({ ...options, onError: ({ error }) => (failure = error) });
  let text = "";
  for await (const delta of result.textStream) text += delta;
  if (failure) throw failure;
  return [text, await result.responseMessages];
}

const messages = [];
const answers = [];
for (const { question, tools: names } of TURNS) {
  messages.push({ role: "user", content: question });
  const [text, added] = await turn(messages, names);
  answers.push(text);
  messages.push(...added);
}
report(answers);
