"""`python -m unittest`: the logic on your Python, then the built component
called through Wharf (run `wharf build` first; set WHARF to the wharf binary
if it is not on PATH)."""

import os
import subprocess
import unittest

from greeting import greeting

COMPONENT = "{{name}}.wasm"


class GreetingTest(unittest.TestCase):
    def test_greets_by_name(self):
        self.assertEqual(greeting("Ada"), "Hello, Ada!")

    def test_greet_through_wharf(self):
        self.assertTrue(os.path.exists(COMPONENT), f"{COMPONENT} is missing: run `wharf build` first")
        wharf = os.environ.get("WHARF", "wharf")
        out = subprocess.run(
            [wharf, "call", COMPONENT, "greet", "--args", '{"name":"Ada"}'],
            check=True,
            capture_output=True,
            text=True,
        )
        self.assertEqual(out.stdout.strip(), "Hello, Ada!")


if __name__ == "__main__":
    unittest.main()
