"""Packaging: the licence, the declared floors (pinned in .ci/min-versions.txt, which CI installs and
tests), the package data and the citation metadata agree with pyproject.toml."""

import datetime
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
tomllib = pytest.importorskip("tomllib")   # Python >= 3.11; the checks are the same everywhere


def _release(version: str) -> tuple:
    """'1.10.0' and '1.10' are the same release."""
    parts = [int(x) for x in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _floors(requirements) -> dict:
    """{name: floor} of requirements 'name[extra]>=x.y' (each must have a '>=' floor)."""
    floors = {}
    for req in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^\]]*\])?>=([0-9][0-9.]*)", req.replace(" ", ""))
        assert match, f"requirement {req!r} has no plain '>=' floor"
        floors[match.group(1).lower()] = _release(match.group(3))
    return floors


def _pins() -> dict:
    lines = (ROOT / ".ci" / "min-versions.txt").read_text().splitlines()
    pins = dict(line.strip().lower().split("==") for line in lines if line.strip() and not line.startswith("#"))
    return {name: _release(version) for name, version in pins.items()}


def test_min_versions_pin_every_declared_floor():
    """Every dependency of the core and the 'test' extra is pinned at exactly its floor (dask's
    'distributed' extra at the same version as dask), and nothing else is pinned."""
    project = _pyproject()["project"]
    floors = _floors(project["dependencies"]) | _floors(project["optional-dependencies"]["test"])
    floors["distributed"] = floors["dask"]
    assert _pins() == floors


def test_readme_states_the_declared_floors():
    """The README's 'Dependency floors' paragraph names every floor of the core and the 'test'
    extra at its pyproject version, and the Python floor."""
    project = _pyproject()["project"]
    readme = (ROOT / "README.md").read_text()
    paragraph = readme[readme.index("**Dependency floors.**"):].split("\n\n")[0].replace("\n", " ")
    stated = {name.lower(): _release(version)
              for name, version in re.findall(r"([A-Za-z][\w-]*)(?:\[[^\]]*\])? >= ([0-9]+(?:\.[0-9]+)*)", paragraph)}
    floors = _floors(project["dependencies"]) | _floors(project["optional-dependencies"]["test"])
    floors["python"] = _release(project["requires-python"].removeprefix(">="))
    assert stated == floors


def test_licence_is_an_spdx_expression_with_its_file():
    project = _pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    # PEP 639 license expressions need setuptools >= 77.
    backend = _pyproject()["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(7[7-9]|[89]\d|\d{3,})(\.\d+)*", r) for r in backend), backend


def test_every_data_file_of_the_packages_is_declared():
    """Non-Python files inside the packages are listed in [tool.setuptools.package-data] (the
    wheel is checked to contain them by .ci/min-versions)."""
    declared = _pyproject()["tool"]["setuptools"]["package-data"]
    data_files = [p.relative_to(ROOT) for top in ("theory", "numerics", "figures")
                  for p in (ROOT / top).rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
                  and "__pycache__" not in p.parts]
    for path in data_files:
        package, name = ".".join(path.parent.parts), path.name
        assert any(Path(name).match(pattern) for pattern in declared.get(package, ())), path


def test_citation_software_entry_is_complete():
    text = (ROOT / "CITATION.cff").read_text()
    field = {key: re.search(rf'^{key}:\s*"?([^"\n]+)"?$', text, re.M) for key in ("version", "date-released", "license")}
    assert all(field.values()), field
    assert field["version"].group(1) == _pyproject()["project"]["version"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", field["date-released"].group(1))
    assert field["license"].group(1) == _pyproject()["project"]["license"]
    assert datetime.date.fromisoformat(field["date-released"].group(1)) <= datetime.date.today()


def test_citation_urls_are_those_of_pyproject():
    """The software's repository is cited only when pyproject.toml declares it (never guessed), and
    the paper's URL is the one pyproject.toml gives."""
    text = (ROOT / "CITATION.cff").read_text()
    urls = {key.lower(): value for key, value in _pyproject()["project"]["urls"].items()}
    repository = urls.get("repository") or urls.get("source") or urls.get("source code")
    cited = re.search(r'^repository-code:\s*"?([^"\n]+)"?$', text, re.M)
    assert (cited.group(1) if cited else None) == repository
    assert re.search(r'^  url:\s*"?([^"\n]+)"?$', text, re.M).group(1) == urls["paper"]
