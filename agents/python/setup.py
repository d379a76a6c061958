# SPDX-License-Identifier: Apache-2.0
# `pip install agents/python`: a plain setup.py (no pyproject.toml), so that
# pip builds it with the setuptools already installed (Debian's
# python3-setuptools) instead of fetching one into an isolated build
# environment: the install works offline.
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))

setup(
    name="strag-agent",
    version="0.1.0",
    description="Live straggler monitoring agent for PyTorch training jobs "
                "(reports to `strag serve`)",
    long_description=open(os.path.join(HERE, "README.md")).read(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.8",
    packages=["strag_agent"],
    install_requires=[],  # standard library only; uses torch when the job has it
    entry_points={"console_scripts": ["strag-agent-run=strag_agent.run:main"]},
)
