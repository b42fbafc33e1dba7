#!/usr/bin/python3
# tests/data/chat/generate.py — golden chat renderings for tests/unit/chat_template_test.cpp.
#
# Renders every template in templates/ over the conversations below with Jinja2 set up the
# way Hugging Face transformers' apply_chat_template sets it up (ImmutableSandboxedEnvironment,
# trim_blocks and lstrip_blocks ON, the loopcontrols extension, globals raise_exception and
# strftime_now, a tojson filter with ensure_ascii=False; render() gets messages, tools=None,
# documents=None, add_generation_prompt and the tokenizer's special tokens), and writes one
# golden/<template>.json per template: the variables used, and for every conversation and both
# values of add_generation_prompt either the rendered text or the template's error message.
#
# Run from anywhere with Debian's python3-jinja2 (apt-get install python3-jinja2):
#     /usr/bin/python3 tests/data/chat/generate.py
# The output is deterministic (strftime_now is pinned to FIXED_NOW), so re-running it gives
# byte-identical files.
import datetime
import json
import pathlib

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = pathlib.Path(__file__).resolve().parent
FIXED_NOW = datetime.datetime(2025, 3, 7, 12, 0, 0)

# template file -> (strata family name, special tokens as the model's tokenizer_config has them,
#                   extra render variables).
TEMPLATES = {
    "meta-llama-Llama-3.1-8B-Instruct.jinja":
        ("llama3.1", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}, {}),
    "meta-llama-Llama-3.2-3B-Instruct.jinja":
        ("llama3.2", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}, {}),
    "Qwen-Qwen2.5-7B-Instruct.jinja":
        ("qwen2.5", {"eos_token": "<|im_end|>"}, {}),
    "google-gemma-2-2b-it.jinja":
        ("gemma2", {"bos_token": "<bos>", "eos_token": "<eos>"}, {}),
    "microsoft-Phi-3.5-mini-instruct.jinja":
        ("phi3.5", {"bos_token": "<s>", "eos_token": "<|endoftext|>"}, {}),
    "phi-3-mini-onnxruntime-extensions.jinja":
        ("phi3", {"bos_token": "<s>", "eos_token": "<|endoftext|>"}, {}),
    "mistralai-Mistral-Nemo-Instruct-2407.jinja":
        ("mistral-nemo", {"bos_token": "<s>", "eos_token": "</s>"}, {}),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja":
        ("deepseek-r1", {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"}, {}),
}
# A second Llama 3.1 run with an explicit date, as a caller passing date_string would.
EXTRA_RUNS = {
    "meta-llama-Llama-3.1-8B-Instruct.jinja": {"date_string": "11 Nov 2025"},
}


def m(role, content):
    return {"role": role, "content": content}


SYS = "You are a helpful assistant."
WHITESPACE_EDGES = "\u3000\u00a0\t\v\f\x1c\x85\u2028 padded \u2003\n\r\u205f\u200b"
CONVERSATIONS = [
    ("user_only", [m("user", "Hello!")]),
    ("system_user", [m("system", SYS), m("user", "What is the capital of France?")]),
    ("system_only", [m("system", SYS)]),
    ("assistant_reply", [m("user", "Hi"), m("assistant", "Hello! How can I help?")]),
    ("multi_turn", [m("system", SYS), m("user", "Name a prime."), m("assistant", "7"),
                    m("user", "Another one?"), m("assistant", "11"), m("user", "Thanks")]),
    ("multi_turn_no_system", [m("user", "2+2?"), m("assistant", "4"), m("user", "And 3+3?")]),
    ("unicode", [m("system", "Tu es un assistant. 日本語で答えてください。"),
                 m("user", "Ça va? 🙂 Привет, мир! ½ — ∑ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ‮rtl‬"),
                 m("assistant", "Très bien, merci ! 👍"), m("user", "Ελληνικά; العربية؟")]),
    ("empty_content", [m("system", ""), m("user", "")]),
    ("empty_turns", [m("user", ""), m("assistant", ""), m("user", "still there?")]),
    ("special_characters", [m("system", "Quotes \" ' ` and backslash \\ and {{ braces }} {% tag %} {# c #}"),
                            m("user", "Line one\nLine two\r\nTabs\there\n\n\nEnd with newline\n"),
                            m("assistant", "<|eot_id|><|im_end|><end_of_turn>[INST]</s><|end|> literal"),
                            m("user", "null byte\u0000 and bell \u0007 and DEL \u007f")]),
    ("whitespace_edges", [m("system", WHITESPACE_EDGES), m("user", WHITESPACE_EDGES),
                          m("assistant", "\u2029lead and trail\u3000\u00a0\x1f\u180e"),
                          m("user", "  x  ")]),
    ("only_whitespace", [m("user", " \n\t "), m("assistant", "\u3000"), m("user", "\n")]),
    ("thinking", [m("user", "Think first."),
                  m("assistant", "<think>\nLet me reason.\n</think>\n\nThe answer is 42."),
                  m("user", "Again"),
                  m("assistant", "<think>a</think>b</think>  final"),
                  m("user", "No think tags"), m("assistant", "plain </thin k> answer"),
                  m("user", "ok")]),
    ("system_in_middle", [m("user", "Hi"), m("assistant", "Hello"), m("system", "Be brief."),
                          m("user", "Why?")]),
    ("system_after_user", [m("user", "Hi"), m("system", "Be brief.")]),
    ("two_systems", [m("system", "First system."), m("system", "Second system."), m("user", "Hi")]),
    ("starts_with_assistant", [m("assistant", "I start."), m("user", "Fine.")]),
    ("two_users", [m("user", "One"), m("user", "Two")]),
    ("two_assistants", [m("user", "One"), m("assistant", "A"), m("assistant", "B")]),
    ("ends_with_assistant_after_system", [m("system", SYS), m("user", "Q"), m("assistant", "A")]),
    ("long", [m("system", "S " * 200)] + [m("user" if i % 2 == 0 else "assistant",
                                            f"turn {i}: " + "lorem ipsum " * (i + 1))
                                          for i in range(9)]),
]
# The content-heavy conversations again without their system message, so that templates
# without a system role (Gemma) render them too.
CONVERSATIONS += [(name + "_nosys", messages[1:]) for name, messages in CONVERSATIONS
                  if name in ("multi_turn", "unicode", "special_characters", "whitespace_edges", "long")]


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                       extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = FIXED_NOW.strftime
    return env


def render_all(template, specials, variables):
    cases = []
    for name, messages in CONVERSATIONS:
        for gen in (False, True):
            case = {"name": name, "add_generation_prompt": gen}
            try:
                case["output"] = template.render(messages=messages, tools=None, documents=None,
                                                 add_generation_prompt=gen, **specials, **variables)
            except jinja2.exceptions.TemplateError as e:
                case["error"] = f"{type(e).__name__}: {e}"
            cases.append(case)
    return cases


def main():
    env = environment()
    conversations = {name: messages for name, messages in CONVERSATIONS}
    (HERE / "golden").mkdir(exist_ok=True)
    runs = [(f, {}) for f in TEMPLATES] + list(EXTRA_RUNS.items())
    for file, variables in runs:
        family, specials, extra = TEMPLATES[file]
        variables = {**extra, **variables}
        template = env.from_string((HERE / "templates" / file).read_text(encoding="utf-8"))
        cases = render_all(template, specials, variables)
        # What the C++ side passes: the special tokens, and as the date the explicit
        # date_string or, for templates that call strftime_now, the pinned clock.
        date = variables.get("date_string")
        if date is None and "strftime_now" in (HERE / "templates" / file).read_text(encoding="utf-8"):
            date = FIXED_NOW.strftime("%d %b %Y")
        golden = {
            "template": file,
            "family": family,
            "bos_token": specials.get("bos_token", ""),
            "eos_token": specials.get("eos_token", ""),
            "date": date,
            "conversations": conversations,
            "cases": cases,
        }
        stem = file.removesuffix(".jinja") + ("-" + "-".join(f"{k}" for k in variables) if variables else "")
        out = HERE / "golden" / f"{stem}.json"
        out.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        ok = sum("output" in c for c in cases)
        print(f"{out.name}: {ok} renderings, {len(cases) - ok} template errors")


if __name__ == "__main__":
    main()
