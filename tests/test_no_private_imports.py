"""No module of figures/ imports a private name (a leading '_') of another module; a private helper
module (``_common``, ``_training_panels``) may be imported by its own package only."""

import ast
from pathlib import Path

from figures.codehash import module_file, project_root

ROOT = project_root()


def _violations(package: str):
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            parts = module.split(".") if is_package else module.split(".")[:-1]
            source = (".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                      if node.level else node.module or "")
            for alias in node.names:
                private_name = alias.name.startswith("_") and module_file(f"{source}.{alias.name}", ROOT) is None
                package_of_module = module if is_package else module.rsplit(".", 1)[0]
                target = f"{source}.{alias.name}" if module_file(f"{source}.{alias.name}", ROOT) else source
                private = [i for i, p in enumerate(target.split(".")) if p.startswith("_")]
                # a private module is importable from its own package only
                private_module = bool(private) and not package_of_module.startswith(
                    ".".join(target.split(".")[:private[0]]))
                if private_name or private_module:
                    found.append(f"{module}: from {source} import {alias.name}")
    return found


def test_figures_imports_no_private_name_of_another_module():
    assert _violations("figures") == []


def test_the_check_finds_a_private_import(tmp_path, monkeypatch):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a.py").write_text("from .runner import _stem\nfrom . import _private_helper\n")
    (tmp_path / "figures" / "_private_helper.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert _violations("figures") == ["figures.a: from figures.runner import _stem"]
