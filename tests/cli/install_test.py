#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Identity and installation: `strag --version` names the version, commit
and compiler; `strag help COMMAND` is `strag COMMAND --help`; `cmake
--install` (make install PREFIX=...) puts a working binary, the Python
agent and the docs under the prefix.

usage: install_test.py STRAG BUILD_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

STRAG = BUILD = None


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


class IdentityTest(unittest.TestCase):
    def test_version(self):
        for flag in ("--version", "version"):
            p = run(STRAG, flag)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertRegex(p.stdout, r"^strag \d+\.\d+\.\d+ \(commit (?:[0-9a-f]+|unknown), ")
            self.assertIn("ISA-L inflate:", p.stdout)

    def test_help_command_is_command_help(self):
        for command in ("analyze", "plan", "simulate", "tail", "cost", "serve",
                        "history"):
            a, b = run(STRAG, "help", command), run(STRAG, command, "--help")
            self.assertEqual(a.returncode, 0, a.stderr)
            self.assertEqual(a.stdout, b.stdout)
            self.assertTrue(a.stdout.startswith("usage: strag " + command), a.stdout[:80])
        p = run(STRAG, "help", "nope")
        self.assertEqual(p.returncode, 2)
        self.assertIn('unknown command "nope"', p.stderr)
        p = run(STRAG, "help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--version", p.stdout)


class InstallTest(unittest.TestCase):
    def test_install_prefix(self):
        prefix = tempfile.mkdtemp(prefix="strag-install-")
        try:
            p = run("cmake", "--install", BUILD, "--prefix", prefix)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            exe = os.path.join(prefix, "bin", "strag")
            p = run(exe, "--version")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.startswith("strag "))
            # serve runs in strag-serve, installed beside strag.
            p = run(exe, "serve", "--help")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertTrue(p.stdout.startswith("usage: strag serve"), p.stdout[:80])
            agent = os.path.join(prefix, "share", "strag", "agents", "python",
                                 "strag_agent", "__init__.py")
            self.assertTrue(os.path.isfile(agent))
            self.assertTrue(os.path.isfile(os.path.join(
                prefix, "share", "doc", "strag", "live.md")))
            self.assertTrue(os.path.isfile(os.path.join(
                prefix, "share", "strag", "examples", "live", "strag-alerts.yml")))
        finally:
            shutil.rmtree(prefix, ignore_errors=True)


if __name__ == "__main__":
    STRAG, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0]], verbosity=2)
