#!/usr/bin/env python3
"""tests/integration/jinja_parity_test.py — strata's Jinja interpreter against Python's jinja2,
byte for byte. Every template is rendered by `strata-gguf template` and by jinja2 set up the way
Hugging Face's apply_chat_template sets it up (ImmutableSandboxedEnvironment with trim_blocks,
lstrip_blocks and loopcontrols; raise_exception, strftime_now at the given date, tojson =
json.dumps with ensure_ascii=False; tools=None when absent, documents=None), for system,
multi-turn, non-ASCII and tool-call conversations, with and without the generation prompt.
A rendering must match exactly; a template that raises must make strata-gguf exit 1 with the
same message; a template that fails otherwise must fail in strata too.

Templates: tests/data/chat/templates/ (models' templates kept in the tree), tests/data/chat/jinja/
(hand-written feature templates), and when ../shared is present its data/chat-templates/ and
the chat_template fields of its data/tokenizers/*/tokenizer_config.json."""
import datetime
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ.get("STRATA_BUILD_DIR", "build")
SRC = os.environ.get("STRATA_SOURCE_DIR", ".")
SHARED = os.environ.get("STRATA_SHARED_DIR", os.path.join(SRC, "..", "shared"))
TOOL = os.path.join(BUILD, "client", "strata-gguf")
CHAT = os.path.join(SRC, "tests", "data", "chat")
DATE = "26 Jul 2024"

try:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:  # python3-jinja2 is a Build-Depends; say so instead of failing obscurely
    jinja2 = None


class Raised(Exception):
    """raise_exception() called by the template."""


def reference_environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[jinja2.ext.loopcontrols])

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def raise_exception(message):
        raise Raised(message)

    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = datetime.datetime.strptime(DATE, "%d %b %Y").strftime
    return env


def m(role, content, **extra):
    return {"role": role, "content": content, **extra}


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"]}}}
CALL = {"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}}
CALL_TEXT = {"id": "call12345", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}

CONVERSATIONS = {
    "system": {"messages": [m("system", "You are a helpful assistant."), m("user", "What is 2+2?")]},
    "multi_turn": {"messages": [m("system", "Be brief."), m("user", "Name a prime."), m("assistant", "7"),
                                m("user", "Another?"), m("assistant", "11"), m("user", "Thanks")]},
    "no_system": {"messages": [m("user", "Hi"), m("assistant", " Hello! "), m("user", "Bye")]},
    "non_ascii": {"messages": [m("system", "Réponds en français. 日本語も OK"),
                               m("user", "Ça va? 🙂 Привет «мир» — ½ \"quotes\" 'single' \\ back"),
                               m("assistant", "Très bien ! 👍\n\tindented"), m("user", "Ελληνικά; العربية؟ \u3000")]},
    "tool_call": {"tools": [WEATHER],
                  "messages": [m("system", "You can call tools."), m("user", "Weather in Paris?"),
                               m("assistant", None, tool_calls=[CALL]),
                               m("tool", "{\"temperature\": 21}", tool_call_id="call12345", name="get_weather"),
                               m("assistant", "It is 21 °C in Paris."), m("user", "Thanks!")]},
    "tool_call_text_arguments": {"tools": [WEATHER],
                                 "messages": [m("user", "Weather in Paris?"),
                                              m("assistant", None, tool_calls=[CALL_TEXT]),
                                              m("tool", "sunny", tool_call_id="call12345")]},
    "tools_only": {"tools": [WEATHER], "messages": [m("user", "What can you do?")]},
}
SPECIALS = [("<s>", "</s>"), ("<|begin_of_text|>", "<|eot_id|>")]


def templates():
    found = {}
    for pattern in (os.path.join(CHAT, "templates", "*.jinja"), os.path.join(CHAT, "jinja", "*.jinja"),
                    os.path.join(SHARED, "data", "chat-templates", "*.jinja")):
        for path in sorted(glob.glob(pattern)):
            found[path] = open(path, encoding="utf-8").read()
    for path in sorted(glob.glob(os.path.join(SHARED, "data", "tokenizers", "*", "tokenizer_config.json"))):
        tmpl = json.load(open(path, encoding="utf-8")).get("chat_template")
        named = tmpl if isinstance(tmpl, list) else [{"name": "default", "template": tmpl}] if tmpl else []
        for entry in named:
            found[f"{path}:{entry['name']}"] = entry["template"]
    return found


@unittest.skipIf(jinja2 is None, "python3-jinja2 is not installed (apt-get install python3-jinja2)")
class JinjaParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.env = reference_environment()
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def reference(self, source, conv, gen, bos, eos):
        try:
            out = self.env.from_string(source).render(
                messages=conv["messages"], tools=conv.get("tools"), documents=None,
                add_generation_prompt=gen, bos_token=bos, eos_token=eos)
            return "ok", out
        except Raised as e:
            return "raised", str(e)
        except Exception as e:  # any other template failure: strata must fail too
            return "failed", f"{type(e).__name__}: {e}"

    def strata(self, template_path, messages_path, gen, bos, eos):
        args = [TOOL, "template", template_path, "--messages", messages_path, "--bos-token", bos,
                "--eos-token", eos, "--date", DATE] + (["--add-generation-prompt"] if gen else [])
        return subprocess.run(args, capture_output=True, timeout=60)

    def test_every_template_matches_jinja2(self):
        found = templates()
        if not os.path.isdir(SHARED):
            print(f"note: {SHARED} is absent; checking only the templates in tests/data/chat", file=sys.stderr)
        compared = 0
        for t_index, (name, source) in enumerate(found.items()):
            template_path = os.path.join(self.tmp.name, f"t{t_index}.jinja")
            with open(template_path, "w", encoding="utf-8") as f:
                f.write(source)
            for conv_name, conv in CONVERSATIONS.items():
                messages_path = os.path.join(self.tmp.name, f"{conv_name}.json")
                with open(messages_path, "w", encoding="utf-8") as f:
                    json.dump(conv, f, ensure_ascii=False)
                for gen in (False, True):
                    for bos, eos in SPECIALS:
                        with self.subTest(template=name, conversation=conv_name, gen=gen, bos=bos):
                            kind, want = self.reference(source, conv, gen, bos, eos)
                            r = self.strata(template_path, messages_path, gen, bos, eos)
                            err = r.stderr.decode("utf-8", "replace")
                            if kind == "ok":
                                self.assertEqual(r.returncode, 0, err)
                                self.assertEqual(r.stdout.decode("utf-8"), want)
                            elif kind == "raised":
                                self.assertEqual(r.returncode, 1, f"expected the template to raise: {want}")
                                self.assertEqual(err, want + "\n")
                            else:
                                self.assertEqual(r.returncode, 1, f"jinja2 failed ({want}) but strata rendered")
                            compared += 1
        print(f"{len(found)} templates, {compared} renderings compared", file=sys.stderr)
        self.assertGreater(compared, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
