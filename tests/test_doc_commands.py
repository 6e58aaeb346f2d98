"""Every stormcf command in a ``sh`` block of the README and of docs/ runs as written in an empty directory (the
shipped examples found through the prism_models/ fallback), in the order of its page, with the exit code it
documents; slow ones with the quick options of ``doc_commands.QUICK`` (tests/doc_commands.py says how)."""
import shutil

import pytest

from doc_commands import QUICK, ROOT, commands, documented, pages, run_page


def test_every_sh_line_is_a_command_or_a_set_up_command():
    found = documented()                       # raises for a line that is neither
    assert len(found) >= 40
    assert {c.argv[0] for c in found} >= {"info", "check", "strategy", "strategy-file", "simulate", "learn",
                                          "demo-learn", "icfmdp", "explain-path", "setcover", "setcover-data",
                                          "setcover-learn", "setcover-evaluate", "recourse", "demo", "examples"}


def test_every_quick_entry_is_a_documented_command():
    assert set(QUICK) <= {c.text for c in documented()}


def test_the_readme_has_one_example_of_every_command():
    from stormcf.cli import build_parser
    readme = {c.argv[0] for c in commands(ROOT / "README.md")}
    assert readme == set(build_parser()._subparsers._group_actions[0].choices)


def in_process(monkeypatch, capsys):
    from stormcf.cli import main

    def run(argv, folder):
        monkeypatch.chdir(folder)
        code = main(argv)
        out, err = capsys.readouterr()
        return code, out + err
    return run


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in pages() if commands(p)], ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_run_as_written(page, monkeypatch, capsys):
    without = [] if shutil.which("dot") else ["graphviz"]
    outcomes = run_page(commands(page), in_process(monkeypatch, capsys), without=without)
    failed = [f"{o.command.where}: exit {o.code} (documented {o.command.exit_code}): {o.command.text}\n"
              + (f"the page shows '{o.missing}', which the output lacks\n" if o.missing is not None else "")
              + o.output.strip()[-600:] for o in outcomes if not o.ok]
    assert not failed, "\n".join(failed)


def test_relative_links_point_to_files_and_headings():
    """Every relative link of the README and docs/ names a file that exists (and a heading of it, for #anchors)."""
    import re
    broken = []
    for page in pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if "://" in target:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and file.suffix == ".md":
                headings = re.findall(r"(?m)^#+ (.*)$", file.read_text(encoding="utf-8"))
                slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}
                if anchor not in slugs:
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, broken


def test_the_repositorys_files_the_docs_name_exist():
    """Every path of the repository the README and docs/ name in backquotes (`stormcf/modelcheck/`,
    `scripts/reproduce.py`) exists: a renamed module or a file that moved makes the page wrong."""
    import re
    missing = []
    for page in pages():
        for path in re.findall(r"`((?:stormcf|scripts|tests|docker|docs|prism_models|\.ci)/[\w./-]*)", page.read_text(
                encoding="utf-8")):
            path = path.split("::")[0].rstrip(".")
            if path == "stormcf/1" or re.search(r"/[A-Z]+(\.|$)", path) or path.endswith((".command_cases", "_")):
                continue            # the schema's version, placeholders (prism_models/NAME, test_<command>), a function
            if not (ROOT / path).exists():
                missing.append(f"{page.relative_to(ROOT)}: {path}")
    assert not missing, missing
