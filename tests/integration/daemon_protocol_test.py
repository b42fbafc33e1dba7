#!/usr/bin/env python3
"""tests/integration/daemon_protocol_test.py — every native method of strata-protocol(7)
against the real stratad: generate (prompt and messages, streamed and not, named sessions
keeping their history), cancel, tokenize, detokenize, session.*, status, model.info;
several requests in flight on one connection; error objects and notifications."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, DaemonTestCase  # noqa: E402


class ProtocolTest(DaemonTestCase):
    def client(self):
        return self.daemon.client()

    def test_generate_streams_tokens_then_the_result(self):
        with self.client() as c:
            reply, tokens = c.generate({"prompt": "Once upon a time", "max_tokens": 12, "temperature": 0, "seed": 5})
        result = reply["result"]
        self.assertEqual(reply["jsonrpc"], "2.0")
        self.assertEqual(result["finish_reason"], "length")
        self.assertEqual(result["text"], "".join(tokens))
        self.assertGreater(len(tokens), 1)
        self.assertEqual(result["usage"]["completion_tokens"], 12)
        self.assertGreater(result["usage"]["prompt_tokens"], 1)
        self.assertEqual(result["usage"]["cached_tokens"], 0)
        self.assertEqual(result["seed"], 5)
        self.assertIsNone(result["session"])
        for key in ("queued_ms", "prompt_ms", "generate_ms", "prompt_tps", "generate_tps"):
            self.assertGreaterEqual(result["timings"][key], 0)
        self.assertGreater(result["timings"]["generate_tps"], 0)

    def test_greedy_is_deterministic_and_stream_false_sends_no_tokens(self):
        params = {"prompt": "The cat", "max_tokens": 10, "temperature": 0, "stream": False}
        with self.client() as c:
            first, tokens = c.generate(params)
            second, _ = c.generate(params)
        self.assertEqual(tokens, [])
        self.assertEqual(first["result"]["text"], second["result"]["text"])
        self.assertTrue(first["result"]["text"])

    def test_random_seed_is_reported_and_reproduces(self):
        with self.client() as c:
            first = c.generate({"prompt": "A dog", "max_tokens": 10, "stream": False})[0]["result"]
            again = c.generate({"prompt": "A dog", "max_tokens": 10, "stream": False, "seed": first["seed"]})[0]
        self.assertEqual(again["result"]["text"], first["text"])

    def test_stop_string_ends_the_generation(self):
        with self.client() as c:
            free = c.generate({"prompt": "Once upon a time", "max_tokens": 30, "temperature": 0, "stream": False})[0]
            text = free["result"]["text"]
            word = text.split()[2]
            stopped = c.generate({"prompt": "Once upon a time", "max_tokens": 30, "temperature": 0,
                                  "stream": False, "stop": [word]})[0]["result"]
        self.assertEqual(stopped["finish_reason"], "stop")
        self.assertEqual(stopped["text"], text[:text.index(word)])

    def test_named_session_keeps_its_history(self):
        with self.client() as c:
            one = c.generate({"session": "proto-story", "prompt": "Once upon a time", "max_tokens": 8,
                              "temperature": 0, "stream": False})[0]["result"]
            self.assertEqual(one["session"], "proto-story")
            two = c.generate({"session": "proto-story", "prompt": " Then", "max_tokens": 8, "temperature": 0,
                              "stream": False})[0]["result"]
            # The second turn reuses the first turn's tokens from the KV cache.
            self.assertGreaterEqual(two["usage"]["cached_tokens"], one["usage"]["prompt_tokens"])
            info = c.call("session.info", {"session": "proto-story"})["result"]
            self.assertEqual(info["name"], "proto-story")
            self.assertEqual(info["uid"], 0)
            # (SentencePiece may add its dummy-prefix space before " Then": compare without spaces.)
            self.assertEqual(info["text"].replace(" ", ""),
                             ("Once upon a time" + one["text"] + " Then" + two["text"]).replace(" ", ""))
            self.assertEqual(info["tokens"], two["usage"]["prompt_tokens"] + 8)
            self.assertFalse(info["busy"])
            listed = c.call("session.list")["result"]["sessions"]
            entry = next(s for s in listed if s["name"] == "proto-story")
            for key in ("name", "uid", "tokens", "messages", "cached", "busy", "created", "last_used"):
                self.assertIn(key, entry)
            self.assertNotIn("conversation", entry)
            reset = c.call("session.reset", {"session": "proto-story"})["result"]
            self.assertEqual(reset, {"session": "proto-story", "reset": True})
            self.assertEqual(c.call("session.info", {"session": "proto-story"})["result"]["tokens"], 0)
            deleted = c.call("session.delete", {"session": "proto-story"})["result"]
            self.assertEqual(deleted, {"session": "proto-story", "deleted": True})
            missing = c.call("session.info", {"session": "proto-story"})["error"]
            self.assertEqual(missing["code"], -32001)
            self.assertEqual(missing["data"]["type"], "session_not_found")

    def test_chat_messages_with_a_template(self):
        with self.client() as c:
            reply = c.generate({"session": "proto-chat", "chat_template": "plain", "max_tokens": 6,
                                "temperature": 0, "stream": False,
                                "messages": [{"role": "system", "content": "Tell stories."},
                                             {"role": "user", "content": "Hello"}]})[0]
            self.assertIn("result", reply, reply)
            info = c.call("session.info", {"session": "proto-chat"})["result"]
            self.assertEqual([m["role"] for m in info["conversation"]], ["system", "user", "assistant"])
            self.assertEqual(info["conversation"][2]["content"], reply["result"]["text"])
            self.assertEqual(info["messages"], 3)
            c.call("session.delete", {"session": "proto-chat"})

    def test_chat_messages_with_the_models_own_template(self):
        """The bundled model carries a chat template: messages need no chat_template, and a
        reply is what the same text as a raw prompt gives (the template writes BOS and one line
        per turn)."""
        with self.client() as c:
            self.assertEqual(c.call("model.info")["result"]["chat_template"], "jinja")
            chat = c.generate({"max_tokens": 10, "temperature": 0, "stream": False,
                               "messages": [{"role": "system", "content": "Tell stories."},
                                            {"role": "user", "content": " Once upon a time "}]})[0]
            self.assertIn("result", chat, chat)
            raw = c.generate({"prompt": "Tell stories.\nOnce upon a time\n", "max_tokens": 10,
                              "temperature": 0, "stream": False})[0]
            self.assertEqual(chat["result"]["text"], raw["result"]["text"])

    def test_several_requests_in_flight_on_one_connection(self):
        with self.client() as c:
            # One write: sent line by line, a fast machine can finish the first reply
            # before the fourth line arrives.
            ids = c.send_together("generate", [{"prompt": f"Story {i}", "max_tokens": 64,
                                                "temperature": 0, "ignore_eos": True}
                                               for i in range(4)])
            finished, first_token_at, order = {}, {}, 0
            while len(finished) < 4:
                message = c.read()
                order += 1
                if message.get("method") == "token":
                    first_token_at.setdefault(message["params"]["id"], order)
                else:
                    finished[message["id"]] = (order, message)
        self.assertEqual(sorted(finished), ids)
        for id in ids:
            self.assertEqual(finished[id][1]["result"]["usage"]["completion_tokens"], 64)
        # Their tokens interleave: some two ran at once, each streaming before the other ended.
        # (Not all four: the engine may run a few steps of the first before the connection has
        # submitted the others, and on a fast machine a short reply can end in that time.)
        overlapping = [(a, b) for a in ids for b in ids
                       if a < b and first_token_at[a] < finished[b][0] and first_token_at[b] < finished[a][0]]
        self.assertTrue(overlapping, (first_token_at, {id: o for id, (o, _) in finished.items()}))

    def test_cancel_ends_a_generation_with_its_own_result(self):
        with self.client() as c:
            id = c.send("generate", LONG)
            while True:
                message = c.read()
                if message.get("method") == "token":
                    break
            cancel_id = c.send("cancel", {"id": id})
            response, _ = c.wait(cancel_id)
            self.assertEqual(response["result"], {"cancelled": True})
            result, _ = c.wait(id)
            self.assertEqual(result["result"]["finish_reason"], "cancelled")
            self.assertLess(result["result"]["usage"]["completion_tokens"], LONG["max_tokens"])
            again = c.call("cancel", {"id": id})
            self.assertEqual(again["result"], {"cancelled": False})
            # A notification gets no answer, but still cancels.
            id = c.send("generate", LONG)
            c.send("cancel", {"id": id}, notification=True)
            result, _ = c.wait(id)
            self.assertEqual(result["result"]["finish_reason"], "cancelled")

    def test_string_ids_and_duplicate_ids_in_flight(self):
        with self.client() as c:
            c.send("generate", LONG, id="abc")
            duplicate = c.wait(c.send("generate", LONG, id="abc"))
            self.assertEqual(duplicate[0]["error"]["code"], -32600)
            c.send("cancel", {"id": "abc"}, notification=True)
            self.assertEqual(c.wait("abc")[0]["result"]["finish_reason"], "cancelled")

    def test_tokenize_and_detokenize(self):
        with self.client() as c:
            tokens = c.call("tokenize", {"text": "Once upon a time"})["result"]["tokens"]
            self.assertEqual(tokens[0], 1)  # BOS
            plain = c.call("tokenize", {"text": "Once upon a time", "add_special": False})["result"]["tokens"]
            self.assertEqual(plain, tokens[1:])
            text = c.call("detokenize", {"tokens": plain})["result"]["text"]
            self.assertEqual(text.strip(), "Once upon a time")
            error = c.call("detokenize", {"tokens": [5, 100000]})["error"]
            self.assertEqual(error["code"], -32602)
            self.assertEqual(error["data"]["field"], "tokens[1]")

    def test_status_and_model_info(self):
        with self.client() as c:
            status = c.call("status")["result"]
            info = c.call("model.info")["result"]
        for key in ("model", "weights_mode", "memory_plan", "threads", "uptime_s", "sessions", "requests_running",
                    "requests_queued", "requests_total", "requests_failed", "prompt_tokens_total",
                    "completion_tokens_total", "cached_tokens_total", "generate_tps_recent", "prompt_tps_recent",
                    "kv_bytes", "kv_mapped_bytes", "rss_bytes", "connections"):
            self.assertIn(key, status)
        self.assertGreaterEqual(status["connections"], 1)
        self.assertEqual(status["threads"], 1)
        self.assertEqual(info["arch"], "llama")
        self.assertEqual(info["n_vocab"], 512)
        self.assertEqual(info["n_layer"], 5)
        self.assertEqual(info["path"], self.daemon.model)
        self.assertEqual(info["file_bytes"], os.path.getsize(self.daemon.model))
        self.assertEqual(info["tensor_types"], {"F32": 48})
        for key in ("name", "n_ctx_train", "context", "n_embd", "n_head", "n_head_kv", "n_ff", "n_params",
                    "chat_template"):
            self.assertIn(key, info)

    def test_envelope_errors(self):
        with self.client() as c:
            c.send_raw(b"this is not json\n")
            error = c.read()
            self.assertIsNone(error["id"])
            self.assertEqual(error["error"]["code"], -32700)
            self.assertEqual(error["error"]["data"]["type"], "parse_error")
            c.send_raw(b'{"id":4,"method":"status"}\n')
            error = c.read()
            self.assertEqual((error["id"], error["error"]["code"]), (4, -32600))
            error = c.call("no.such.method")
            self.assertEqual(error["error"]["code"], -32601)
            c.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"status","params":[1]}\n')
            self.assertEqual(c.read()["error"]["code"], -32602)
            error = c.call("generate", {"prompt": "x", "max_tokens": 3, "colour": "blue"})["error"]
            self.assertEqual((error["code"], error["data"]["field"]), (-32602, "colour"))
            # Blank lines are ignored; a notification is answered with nothing.
            c.send_raw(b"\n\r\n")
            c.send("status", notification=True)
            self.assertIn("result", c.call("model.info"))

    def test_a_half_closed_client_still_gets_its_answer(self):
        with self.client() as c:
            c.send("generate", {"prompt": "Once", "max_tokens": 5, "temperature": 0, "stream": False})
            c.sock.shutdown(2 - 1)  # SHUT_WR, as `echo request | socat` does
            reply = c.read()
            self.assertEqual(reply["result"]["usage"]["completion_tokens"], 5)
            self.assertIsNone(c.read())  # then the daemon closes

    def test_many_requests_on_one_connection_in_one_write(self):
        with self.client() as c:
            lines = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"tokenize","params":{"text":"a b"}}\n' % i
                             for i in range(200))
            c.send_raw(lines)
            seen = set()
            while len(seen) < 200:
                message = c.read()
                seen.add(message["id"])
        self.assertEqual(seen, set(range(200)))


if __name__ == "__main__":
    unittest.main()
