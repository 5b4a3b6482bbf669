"""The README's Python example runs anywhere and prints what its ``# ->`` comments say."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO


def readme_example() -> str:
    text = (REPO / "README.md").read_text()
    match = re.search(r"## Python\n\n```python\n(.*?)```", text, re.DOTALL)
    assert match, "README.md has no Python example under '## Python'"
    return match.group(1)


def test_readme_python_example_prints_what_it_says(haystack_data) -> None:
    code = readme_example()
    expected = [m.group(1).strip() for m in re.finditer(r"# -> (.*)$", code, re.MULTILINE)]
    assert len(expected) >= 6
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.returncode == 0, done.stderr
    printed = [line.strip() for line in done.stdout.splitlines()]
    assert printed == expected, done.stdout
