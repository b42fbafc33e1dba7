#!/usr/bin/env python3
"""tests/integration/daemon_model_file_test.py — the model file changed under a running
stratad (an admin copying a new model over the old one, a truncation). With a resident
plan the daemon computes from its own copy of the weights and metadata, so it keeps
answering exactly as before, and never dies of SIGBUS; with a streamed plan, a request
that would read the changed file fails with an error saying so, and the daemon goes on
serving."""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import MODEL, Daemon, temporary_directory  # noqa: E402
from daemon_streaming_test import GREEDY, streamed_config  # noqa: E402


def copy_of_model():
    path = os.path.join(temporary_directory(), "model.gguf")
    shutil.copyfile(MODEL, path)
    return path


def clobber(path):
    """Truncates the file, then writes other bytes of the same length over it in place."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(0)
        f.flush()
        os.fsync(f.fileno())
    return size


def generate(daemon):
    with daemon.client() as c:
        return c.call("generate", GREEDY)


class ModelFileChanged(unittest.TestCase):
    def test_resident_weights_survive_truncation_and_overwrite(self):
        model = copy_of_model()
        daemon = Daemon(model=model).start()
        self.assertEqual(daemon.status()["weights_mode"], "resident")
        before = generate(daemon)["result"]["text"]
        size = clobber(model)
        self.assertEqual(generate(daemon)["result"]["text"], before)  # truncated to 0 bytes
        with open(model, "r+b") as f:
            f.write(bytes(range(256)) * (size // 256 + 1))
        self.assertEqual(generate(daemon)["result"]["text"], before)  # other bytes, same size
        with daemon.client() as c:  # metadata (vocabulary, model info) is still readable
            self.assertIn("result", c.call("model.info"))
            self.assertIn("result", c.call("tokenize", {"text": "Once upon a time"}))
        self.assertEqual(daemon.stop(), 0)
        self.assertNotIn("SIGBUS", daemon.log())

    def test_streamed_weights_refuse_a_changed_file(self):
        model = copy_of_model()
        daemon = Daemon(streamed_config(), model=model).start()
        self.assertGreater(daemon.status()["streamed_bytes_per_pass"], 0)
        before = generate(daemon)["result"]["text"]
        clobber(model)
        reply = generate(daemon)
        self.assertIn("error", reply, reply)
        self.assertIn("was changed on disk since it was loaded", reply["error"]["message"])
        self.assertIn(model, reply["error"]["message"])
        self.assertEqual(daemon.status()["weights_mode"], "streamed")  # still serving
        with open(model, "wb") as f, open(MODEL, "rb") as original:
            f.write(original.read())
        daemon.stop()
        daemon.start()  # a restart loads the file as it is now
        self.assertEqual(generate(daemon)["result"]["text"], before)
        self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
