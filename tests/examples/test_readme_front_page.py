"""The README is a front page: the two commands first, a screen or two long, every link alive."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_fits_in_two_hundred_lines():
    assert len(README.splitlines()) < 200


def test_the_readme_opens_with_the_install_and_demo_and_the_install_and_test_commands():
    first_block = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert first_block[0].endswith("# install, run the offline demo")
    assert "pip install -e . && neta demo" in first_block[0]
    assert "python -m pytest -n auto" in first_block[1]


def test_every_relative_link_of_the_readme_leads_to_a_file_that_exists():
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if "://" not in link]
    assert relative, "the README links to the documentation"
    missing = [link for link in relative if not (ROOT / link).exists()]
    assert missing == []
