// tests/clients/anthropic_sdk.mjs — the official Anthropic SDK for JavaScript (npm
// `@anthropic-ai/sdk`) talking to a running stratad on its TCP listener, set up as
// agent-clients.md describes (x-api-key as a default header; one client with apiKey, which
// the SDK sends as Authorization: Bearer). Usage: node anthropic_sdk.mjs PORT KEY. Each check
// throws on a mismatch; the exit status is 0 only when all passed. Driven by
// tests/integration/anthropic_messages_test.py.
import assert from "node:assert/strict";
import { runChecks } from "./checks.mjs";
import Anthropic from "@anthropic-ai/sdk";

const [port, key] = process.argv.slice(2);
const baseURL = `http://127.0.0.1:${port}`;
const client = new Anthropic({ baseURL, apiKey: null, authToken: null, defaultHeaders: { "x-api-key": key }, maxRetries: 0 });
const bearer = new Anthropic({ baseURL, apiKey: key, maxRetries: 0 });
const body = { model: "stories260K", messages: [{ role: "user", content: "Tell me a story" }], temperature: 0 };
const tools = [{ name: "get_time", description: "The current time", input_schema: { type: "object", properties: {} } }];

async function messageIsCreated() {
  for (const c of [client, bearer]) {
    const reply = await c.messages.create({ ...body, max_tokens: 8, system: "Be brief." });
    assert.equal(reply.type, "message");
    assert.equal(reply.role, "assistant");
    assert.match(reply.id, /^msg_/);
    assert.equal(reply.content[0].type, "text");
    assert.equal(reply.stop_reason, "max_tokens");
    assert.equal(reply.usage.output_tokens, 8);
  }
}

async function streamGivesTheSameText() {
  const whole = await client.messages.create({ ...body, max_tokens: 12 });
  const stream = client.messages.stream({ ...body, max_tokens: 12 });
  let text = "";
  stream.on("text", (delta) => { text += delta; });
  const final = await stream.finalMessage();
  assert.equal(text, whole.content[0].text);
  assert.equal(final.content[0].text, whole.content[0].text);
  assert.equal(final.stop_reason, "max_tokens");
  assert.equal(final.usage.output_tokens, 12);
}

async function aNamedToolIsCalled() {
  const request = { ...body, max_tokens: 60, tools, tool_choice: { type: "tool", name: "get_time" } };
  const reply = await client.messages.create(request);
  assert.equal(reply.stop_reason, "tool_use");
  const call = reply.content.find((block) => block.type === "tool_use");
  assert.equal(call.name, "get_time");
  assert.match(call.id, /^toolu_/);
  assert.deepEqual(call.input, {});
  const streamed = await client.messages.stream(request).finalMessage();
  assert.equal(streamed.stop_reason, "tool_use");
  assert.deepEqual(streamed.content.find((block) => block.type === "tool_use").input, {});
  const answered = await client.messages.create({
    ...body, max_tokens: 4, tools,
    messages: [...body.messages, { role: "assistant", content: reply.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "noon" }] }],
  });
  assert.equal(answered.type, "message");
}

async function tokensAreCounted() {
  const counted = await client.messages.countTokens({ model: body.model, messages: body.messages });
  const reply = await client.messages.create({ ...body, max_tokens: 1 });
  assert.ok(counted.input_tokens > 0);
  assert.equal(counted.input_tokens, reply.usage.input_tokens + reply.usage.cache_read_input_tokens);
}

async function badRequestIsA400NamingTheField() {
  await assert.rejects(
    client.messages.create({ ...body, max_tokens: 4, tool_choice: { type: "tool", name: "nope" }, tools }),
    (error) => error instanceof Anthropic.BadRequestError && /tool_choice\.name/.test(error.message),
  );
  const stranger = new Anthropic({ baseURL, apiKey: null, authToken: null, defaultHeaders: { "x-api-key": "sk-not-a-key-0123456789" }, maxRetries: 0 });
  await assert.rejects(stranger.messages.create({ ...body, max_tokens: 4 }),
    (error) => error instanceof Anthropic.AuthenticationError);
}

const checks = [messageIsCreated, streamGivesTheSameText, aNamedToolIsCalled, tokensAreCounted, badRequestIsA400NamingTheField];
const failed = await runChecks(checks);
process.exit(failed ? 1 : 0);
