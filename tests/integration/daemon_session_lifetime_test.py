#!/usr/bin/env python3
"""tests/integration/daemon_session_lifetime_test.py — what happens to a session as it grows
and ages, against the real stratad: limits.context_overflow (error: context_full naming
the policy; truncate_middle: a chat keeps its system message and newest turns, for named
sessions and for stateless requests that send the whole conversation) and
limits.session_idle_timeout (an unused session is deleted from memory and disk; a busy one
never is)."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import LONG, TIMEOUT, DaemonTestCase  # noqa: E402

SYSTEM = {"role": "system", "content": "Tell stories."}


def chat(c, messages, session=None, max_tokens=8):
    params = {"messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": False}
    if session:
        params["session"] = session
    return c.generate(params)[0]


def turn(i):
    return {"role": "user", "content": f"Once upon a time there was a little cat number {i}"}


class ContextOverflowErrorTest(DaemonTestCase):
    CONFIG = "[engine]\ncontext = 64\n"

    def test_a_chat_that_outgrows_the_context_fails_and_names_the_policy(self):
        with self.daemon.client() as c:
            reply = None
            for i in range(20):
                reply = chat(c, [turn(i)], session="grows")
                if "error" in reply:
                    break
            self.assertIn("error", reply, "the session never outgrew a 64-token context")
            self.assertEqual(reply["error"]["code"], -32004, reply)
            self.assertIn("truncate_middle", reply["error"]["message"])
            # The session keeps what it had.
            info = c.call("session.info", {"session": "grows"})["result"]
            self.assertEqual(info["messages"], 2 * i)


class TruncateMiddleTest(DaemonTestCase):
    CONFIG = "[engine]\ncontext = 64\n[limits]\ncontext_overflow = truncate_middle\n"

    def assert_turns_alternate(self, conversation):
        self.assertEqual(conversation[0], SYSTEM)
        roles = [m["role"] for m in conversation[1:]]
        self.assertEqual(roles, ["user", "assistant"] * (len(roles) // 2), conversation)

    def test_a_named_chat_drops_its_oldest_turns_and_keeps_the_system_message(self):
        with self.daemon.client() as c:
            dropped = 0
            for i in range(12):
                reply = chat(c, ([SYSTEM] if i == 0 else []) + [turn(i)], session="long")
                self.assertIn("result", reply, reply)
                dropped += reply["result"]["usage"]["dropped_messages"]
            self.assertGreater(dropped, 0, "twelve turns fit a 64-token context?")
            self.assertEqual(dropped % 2, 0, "turns are dropped whole (user + assistant)")
            info = c.call("session.info", {"session": "long"})["result"]
            self.assert_turns_alternate(info["conversation"])
            self.assertEqual(info["conversation"][-2], turn(11))
            self.assertEqual(info["messages"], 1 + 2 * 12 - dropped)
            self.assertLess(info["tokens"], 64)
            self.assertGreaterEqual(self.daemon.status()["messages_dropped"], dropped)

    def test_a_stateless_request_with_a_long_conversation_is_answered(self):
        messages = [SYSTEM]
        for i in range(10):
            messages += [turn(i), {"role": "assistant", "content": "The cat was happy."}]
        messages.append(turn(10))
        with self.daemon.client() as c:
            reply = chat(c, messages)
        self.assertIn("result", reply, reply)
        usage = reply["result"]["usage"]
        self.assertGreater(usage["dropped_messages"], 0)
        self.assertEqual(usage["dropped_messages"] % 2, 0)
        self.assertLess(usage["prompt_tokens"], 64)
        # The same through the OpenAI endpoint.
        status, _, body = self.daemon.curl("http://x/v1/chat/completions",
                                           data={"messages": messages, "max_tokens": 8, "temperature": 0})
        self.assertEqual(status, 200, body)
        self.assertIn(b'"dropped_messages":' + str(usage["dropped_messages"]).encode(), body)

    def test_a_last_turn_that_alone_does_not_fit_fails(self):
        with self.daemon.client() as c:
            reply = chat(c, [SYSTEM, {"role": "user", "content": "the cat sat on the mat " * 12}])
        self.assertIn("error", reply, reply)
        self.assertEqual(reply["error"]["code"], -32004, reply)
        self.assertIn("last user turn", reply["error"]["message"])

    def test_raw_text_is_never_cut(self):
        with self.daemon.client() as c:
            reply = None
            for _ in range(20):
                reply = c.generate({"prompt": " the cat sat on the mat", "max_tokens": 4, "temperature": 0,
                                    "session": "raw", "stream": False})[0]
                if "error" in reply:
                    break
            self.assertEqual(reply["error"]["code"], -32004, reply)


class IdleExpiryTest(DaemonTestCase):
    CONFIG = "[limits]\nsession_idle_timeout = 2s\n"

    def session_names(self, c):
        return {s["name"] for s in c.call("session.list")["result"]["sessions"]}

    def test_an_unused_session_is_deleted_from_memory_and_disk(self):
        with self.daemon.client() as c:
            self.assertIn("result", c.generate({"prompt": "Once", "max_tokens": 2, "session": "old", "stream": False})[0])
            files = [f for f in os.listdir(self.daemon.state_dir) if f.endswith("-old.session")]
            self.assertEqual(len(files), 1, os.listdir(self.daemon.state_dir))
            deadline = time.time() + TIMEOUT
            while "old" in self.session_names(c) and time.time() < deadline:
                time.sleep(0.2)
            self.assertNotIn("old", self.session_names(c))
        self.assertFalse(os.path.exists(os.path.join(self.daemon.state_dir, files[0])))
        self.assertIn('session "old" of uid', self.daemon.log())
        self.assertGreaterEqual(self.daemon.status()["sessions_expired"], 1)

    def test_a_busy_session_is_not_expired(self):
        """While a request runs on it the session stays, however long that takes; its end
        counts as a use."""
        with self.daemon.client() as c, self.daemon.client() as watcher:
            id = c.send("generate", dict(LONG, session="busy"))
            first = c.read()  # the request runs once its first token is out
            self.assertEqual(first.get("method"), "token", first)
            polls = 0
            while self.daemon.status()["requests_running"]:
                self.assertIn("busy", self.session_names(watcher))
                polls += 1
                time.sleep(0.1)
            reply, _ = c.wait(id)
            self.assertIn("result", reply, reply)
            self.assertIn("busy", self.session_names(watcher))
            self.assertGreater(polls, 0)


if __name__ == "__main__":
    unittest.main()
