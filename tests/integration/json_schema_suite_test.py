#!/usr/bin/env python3
"""tests/integration/json_schema_suite_test.py — the JSON-Schema-to-grammar conversion on
the schemas of Debian's json-schema-test-suite (draft4, draft6, draft7): every schema the
subset supports (the others must be refused with invalid_params naming the problem)
drives constrained generation on the real daemon with the tiny model, several seeds each,
and every finished document is validated against its schema by python3-jsonschema.
Skips (77) when the package or the validator is absent."""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import Daemon  # noqa: E402

SUITE = "/usr/share/json-schema-test-suite/tests"
DRAFTS = {"draft4": "Draft4Validator", "draft6": "Draft6Validator", "draft7": "Draft7Validator"}


def schemas():
    for draft, validator in DRAFTS.items():
        for path in sorted(glob.glob(os.path.join(SUITE, draft, "*.json"))):
            for group in json.load(open(path, encoding="utf-8")):
                yield f"{draft}/{os.path.basename(path)}: {group['description']}", group["schema"], validator


def main():
    try:
        import jsonschema
    except ImportError:
        print("skipped: python3-jsonschema is not installed (.ci/install-deps installs it)")
        return 77
    if not os.path.isdir(SUITE):
        print(f"skipped: {SUITE} is absent (package json-schema-test-suite, .ci/install-deps installs it)")
        return 77
    supported = refused = documents = 0
    failures = []
    with Daemon("") as daemon, daemon.client() as c:
        for name, schema, validator in schemas():
            reply = c.generate({"prompt": "Once", "json_schema": schema, "seed": 0, "max_tokens": 1, "stream": False})[0]
            if "error" in reply:
                if reply["error"]["data"]["type"] != "invalid_params" or "json_schema" not in reply["error"]["message"]:
                    failures.append(f"{name}: unexpected error {reply['error']}")
                refused += 1
                continue
            supported += 1
            check = getattr(jsonschema, validator)(schema)
            for seed in range(4):
                result = c.generate({"prompt": "Once", "json_schema": schema, "seed": seed, "max_tokens": 160,
                                     "temperature": 1.0, "stream": False})[0]["result"]
                if result["finish_reason"] != "stop":
                    continue
                documents += 1
                try:
                    check.validate(json.loads(result["text"]))
                except (ValueError, jsonschema.ValidationError) as e:
                    failures.append(f"{name}: {result['text']!r} with schema {json.dumps(schema)}: {e}")
    print(f"{supported} schemas supported, {refused} refused, {documents} finished documents validated")
    for f in failures:
        print("FAIL", f)
    return 1 if failures or supported < 50 or documents < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
