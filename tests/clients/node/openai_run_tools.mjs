// The openai Node SDK's tool runner (`client.chat.completions.runTools`), unchanged, through
// rxgem serve: function tools in each of two user turns, the second from the runner's
// messages. Usage: node openai_run_tools.mjs generate|stream

import OpenAI from "openai";
import { apiKey, baseURL, model, report, TOOLS, TURNS } from "./common.mjs";

const [how] = process.argv.slice(2);
if (how !== "generate" && how !== "stream") throw new Error(`unknown way ${how}`);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

function tools(names) {
  return names.map((name) => ({
    type: "function",
    function: {
      name,
      description: TOOLS[name].description,
      parameters: TOOLS[name].parameters,
      parse: JSON.parse,
      function: (input) => TOOLS[name].run(input),
    },
  }));
}

let messages = [];
const answers = [];
for (const { question, tools: names } of TURNS) {
  messages.push({ role: "user", content: question });
  const runner = client.chat.completions.runTools({
    model,
    messages,
    tools: tools(names),
    ...(how === "stream" ? { stream: true } : {}),
  });
  answers.push(await runner.finalContent());
  messages = runner.messages.slice(); // the whole conversation, as the runner rebuilt it
}
report(answers);
