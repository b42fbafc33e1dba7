// tests/clients/openai_sdk.mjs — the official OpenAI SDK for JavaScript (npm `openai`)
// talking to a running stratad over its Unix socket, through undici's socketPath, as a user
// of that SDK would. Usage: node openai_sdk.mjs SOCKET. Each check throws on a mismatch;
// the exit status is 0 only when all passed. Driven by tests/integration/openai_clients_test.py.
import assert from "node:assert/strict";
import { runChecks } from "./checks.mjs";
import OpenAI from "openai";
import { Agent, fetch as undiciFetch } from "undici";

const dispatcher = new Agent({ connect: { socketPath: process.argv[2] } });
const client = new OpenAI({
  apiKey: "unused-on-the-unix-socket",
  baseURL: "http://localhost/v1",
  maxRetries: 0,
  fetch: (url, init) => undiciFetch(url, { ...init, dispatcher }),
});
const chatBody = { model: "default", messages: [{ role: "user", content: "Tell me a story" }] };

async function modelsAreListed() {
  const page = await client.models.list();
  assert.equal(page.data.length, 1);
  const model = await client.models.retrieve(page.data[0].id);
  assert.equal(model.id, page.data[0].id);
}

async function chatCompletes() {
  const reply = await client.chat.completions.create({ ...chatBody, max_tokens: 8, temperature: 0 });
  assert.equal(reply.object, "chat.completion");
  assert.equal(reply.choices[0].message.role, "assistant");
  assert.equal(typeof reply.choices[0].message.content, "string");
  assert.equal(reply.choices[0].finish_reason, "length");
  assert.equal(reply.usage.completion_tokens, 8);
}

async function chatStreamsTheSameText() {
  const whole = await client.chat.completions.create({ ...chatBody, max_tokens: 12, temperature: 0 });
  const stream = await client.chat.completions.create({
    ...chatBody, max_tokens: 12, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let text = "", finish = null, usage = null;
  for await (const chunk of stream) {
    if (chunk.choices.length) {
      text += chunk.choices[0].delta.content ?? "";
      finish = chunk.choices[0].finish_reason ?? finish;
    }
    usage = chunk.usage ?? usage;
  }
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, "length");
  assert.equal(usage.completion_tokens, 12);
}

async function chatLogprobsDescribeTheTokens() {
  const reply = await client.chat.completions.create({ ...chatBody, max_tokens: 6, temperature: 0, logprobs: true, top_logprobs: 2 });
  const content = reply.choices[0].logprobs.content;
  assert.equal(content.length, 6);
  assert.equal(content.map((t) => t.token).join(""), reply.choices[0].message.content);
  for (const t of content) {
    assert.ok(t.logprob <= 0);
    assert.equal(t.top_logprobs.length, 2);
    assert.equal(t.top_logprobs[0].token, t.token);
  }
}

async function nChoicesComeWithTheirIndexes() {
  const reply = await client.chat.completions.create({ ...chatBody, n: 2, max_tokens: 4, temperature: 1, seed: 1 });
  assert.deepEqual(reply.choices.map((c) => c.index), [0, 1]);
  assert.ok(reply.usage.completion_tokens >= 2);
}

// The bundled model's template has no tool section: calls come as a JSON object (the
// generic format), forced by tool_choice.
async function aRequiredToolCallComesBackParsed() {
  const tools = [{ type: "function", function: { name: "get_weather", parameters: {
    type: "object", properties: { city: { type: "string", maxLength: 10 } }, required: ["city"], additionalProperties: false } } }];
  const reply = await client.chat.completions.create({ ...chatBody, tools, tool_choice: "required", max_tokens: 100, seed: 2 });
  const choice = reply.choices[0];
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.tool_calls[0].function.name, "get_weather");
  assert.equal(typeof JSON.parse(choice.message.tool_calls[0].function.arguments).city, "string");
  const stream = await client.chat.completions.create({ ...chatBody, tools, tool_choice: "required", max_tokens: 100, seed: 2, stream: true });
  let name = "", args = "";
  for await (const chunk of stream)
    for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) {
      name += call.function?.name ?? "";
      args += call.function?.arguments ?? "";
    }
  assert.equal(name, "get_weather");
  assert.deepEqual(JSON.parse(args), JSON.parse(choice.message.tool_calls[0].function.arguments));
}

async function completionCompletes() {
  const reply = await client.completions.create({ model: "default", prompt: "Once upon a time", max_tokens: 6 });
  assert.equal(reply.object, "text_completion");
  assert.equal(typeof reply.choices[0].text, "string");
  assert.equal(reply.usage.completion_tokens, 6);
}

async function jsonSchemaOutputValidates() {
  const schema = {
    type: "object",
    properties: { name: { type: "string", maxLength: 10 }, legs: { type: "integer" } },
    required: ["name", "legs"],
    additionalProperties: false,
  };
  const reply = await client.chat.completions.create({
    ...chatBody, max_tokens: 200, temperature: 0.8, seed: 3,
    response_format: { type: "json_schema", json_schema: { name: "pet", schema, strict: true } },
  });
  const pet = JSON.parse(reply.choices[0].message.content);
  assert.deepEqual(Object.keys(pet).sort(), ["legs", "name"]);
  assert.ok(Number.isInteger(pet.legs));
  assert.ok(pet.name.length <= 10);
}

// The SDK asks for base64 unless told and decodes it: both ways give the same unit vectors.
async function embeddingsAreUnitVectors() {
  const reply = await client.embeddings.create({ model: "default", input: ["a cat", "a dog"] });
  assert.equal(reply.data.length, 2);
  const floats = await client.embeddings.create({ model: "default", input: ["a cat", "a dog"], encoding_format: "float" });
  for (const [i, item] of reply.data.entries()) {
    assert.equal(item.index, i);
    const norm = Math.hypot(...item.embedding);
    assert.ok(Math.abs(norm - 1) < 1e-4, `norm ${norm}`);
    assert.deepEqual(item.embedding, floats.data[i].embedding);
  }
  assert.ok(reply.usage.prompt_tokens > 0);
}

async function badRequestIsA400NamingTheField() {
  await assert.rejects(
    client.chat.completions.create({ ...chatBody, max_tokens: -1 }),
    (error) => error instanceof OpenAI.BadRequestError && /max_tokens/.test(error.message),
  );
}

const checks = [modelsAreListed, chatCompletes, chatStreamsTheSameText, chatLogprobsDescribeTheTokens, nChoicesComeWithTheirIndexes,
  completionCompletes,
  jsonSchemaOutputValidates, aRequiredToolCallComesBackParsed, embeddingsAreUnitVectors, badRequestIsA400NamingTheField];
const failed = await runChecks(checks);
await dispatcher.close();
process.exit(failed ? 1 : 0);
