// What every client script shares: where rxgem serve is, the turns, the tools.
// The test copies these scripts beside a node_modules link to the installed clients and
// runs one with RXGEM_BASE_URL (the server's /v1), RXGEM_TOKEN and RXGEM_MODEL set.

export const baseURL = process.env.RXGEM_BASE_URL;
export const apiKey = process.env.RXGEM_TOKEN;
export const model = process.env.RXGEM_MODEL;
if (!baseURL || !apiKey || !model) {
  throw new Error("set RXGEM_BASE_URL, RXGEM_TOKEN and RXGEM_MODEL");
}

const CITY = {
  type: "object",
  properties: { city: { type: "string", description: "The city" } },
  required: ["city"],
  additionalProperties: false,
};

const ran = [];

// The tools, by name: what each was asked is kept, for the report.
export const TOOLS = {
  get_weather: {
    description: "The current weather in a city.",
    parameters: CITY,
    run: ({ city }) => {
      ran.push(`get_weather ${city}`);
      return { city, temperature_c: 18, sky: "sunny" };
    },
  },
  get_time: {
    description: "The local time in a city.",
    parameters: CITY,
    run: ({ city }) => {
      ran.push(`get_time ${city}`);
      return { city, time: "14:05" };
    },
  },
};

// Two user turns, the second sending the first back as history. Gemini calls the first
// tool offered, so each turn makes a call of its own (and gets a signature of its own).
export const TURNS = [
  { question: "What is the weather in Paris? Use the tool.", tools: ["get_weather"] },
  { question: "And what time is it there? Use the tool.", tools: ["get_time", "get_weather"] },
];

// One JSON line on stdout: the test reads the answers and the tools' runs from it.
export function report(answers) {
  process.stdout.write(JSON.stringify({ answers, ran }) + "\n");
}
