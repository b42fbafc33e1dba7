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

// The Responses API: create, retrieve, continue by previous_response_id, stream, function tools.
const responsesBody = { model: "default", input: "Tell me a story", temperature: 0 };

async function responsesCreateAndContinue() {
  const first = await client.responses.create({ ...responsesBody, max_output_tokens: 8 });
  assert.equal(first.object, "response");
  assert.equal(first.status, "incomplete");
  assert.equal(typeof first.output_text, "string");
  assert.ok(first.output_text.length > 0);
  assert.equal(first.usage.output_tokens, 8);
  assert.deepEqual(await client.responses.retrieve(first.id), first);
  const next = await client.responses.create({ ...responsesBody, input: "And then?", previous_response_id: first.id, max_output_tokens: 4 });
  assert.equal(next.previous_response_id, first.id);
  assert.ok(next.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens);
  assert.equal(typeof next.usage.input_tokens_details.cached_tokens, "number");
  await client.responses.delete(first.id);
  await assert.rejects(client.responses.retrieve(first.id), (error) => error instanceof OpenAI.NotFoundError);
}

async function responsesStreamTheSameText() {
  const whole = await client.responses.create({ ...responsesBody, max_output_tokens: 12, store: false });
  const stream = client.responses.stream({ ...responsesBody, max_output_tokens: 12, store: false });
  let text = "";
  const types = [];
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === "response.output_text.delta") text += event.delta;
  }
  const final = await stream.finalResponse();
  assert.equal(text, whole.output_text);
  assert.equal(final.output[0].content[0].text, whole.output_text);
  assert.deepEqual(types.slice(0, 2), ["response.created", "response.in_progress"]);
  assert.equal(types.at(-1), "response.incomplete");
}

async function responsesCallAFunctionTool() {
  const tools = [{ type: "function", name: "get_weather", strict: true, parameters: {
    type: "object", properties: { city: { type: "string", enum: ["Paris", "Oslo"] } }, required: ["city"], additionalProperties: false } }];
  const first = await client.responses.create({ ...responsesBody, tools, tool_choice: "required", max_output_tokens: 100, temperature: 1, seed: 2 });
  const call = first.output.find((item) => item.type === "function_call");
  assert.equal(call.name, "get_weather");
  assert.ok(["Paris", "Oslo"].includes(JSON.parse(call.arguments).city));
  const answer = await client.responses.create({
    ...responsesBody, tools, previous_response_id: first.id, max_output_tokens: 5,
    input: [{ type: "function_call_output", call_id: call.call_id, output: "sunny" }],
  });
  assert.equal(answer.output[0].type, "message");
  const stream = client.responses.stream({ ...responsesBody, tools, tool_choice: "required", max_output_tokens: 100, temperature: 1, seed: 2 });
  let args = "";
  for await (const event of stream)
    if (event.type === "response.function_call_arguments.delta") args += event.delta;
  assert.deepEqual(JSON.parse(args), JSON.parse(call.arguments));
}

async function responsesRefuseWebSearchNamingTheParam() {
  await assert.rejects(
    client.responses.create({ ...responsesBody, tools: [{ type: "web_search" }] }),
    (error) => error instanceof OpenAI.BadRequestError && error.param === "tools[0].type",
  );
}

async function badRequestIsA400NamingTheField() {
  await assert.rejects(
    client.chat.completions.create({ ...chatBody, max_tokens: -1 }),
    (error) => error instanceof OpenAI.BadRequestError && /max_tokens/.test(error.message),
  );
}

const checks = [modelsAreListed, chatCompletes, chatStreamsTheSameText, chatLogprobsDescribeTheTokens, nChoicesComeWithTheirIndexes,
  completionCompletes,
  jsonSchemaOutputValidates, aRequiredToolCallComesBackParsed, embeddingsAreUnitVectors, badRequestIsA400NamingTheField,
  responsesCreateAndContinue, responsesStreamTheSameText, responsesCallAFunctionTool, responsesRefuseWebSearchNamingTheParam];
const failed = await runChecks(checks);
await dispatcher.close();
process.exit(failed ? 1 : 0);
