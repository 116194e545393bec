"""Programs that reach for the network at run time: found at import, named in a warning.

Codabench's and EvalAI's workers have network access, and many programs use it: they run
``pip install`` when imported (EvalAI's starter ``install("nltk")``, ``subprocess.call(["pip",
"install", ...])``) or fetch data (``nltk.download("punkt")``). Proctor's sandbox has no
network, so such a call fails or does nothing there. The importer reads each program's
Python files (their syntax tree: commented-out or quoted code does not count) and warns,
naming the file, the line and the fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

FETCHERS = frozenset({"download", "urlretrieve", "urlopen", "hf_hub_download", "snapshot_download"})
"""Attribute or function names whose call fetches from the network."""
REQUESTS = frozenset({"get", "post"})


def _strings(node: ast.Call) -> list[str]:
    """The string constants among a call's arguments (and in list/tuple arguments)."""
    found: list[str] = []
    for argument in node.args:
        items = argument.elts if isinstance(argument, ast.List | ast.Tuple) else [argument]
        found += [item.value for item in items if isinstance(item, ast.Constant)
                  and isinstance(item.value, str)]  # fmt: skip
    return found


def _runs_pip(node: ast.Call) -> bool:
    strings = _strings(node)
    return any(text in ("pip", "pip3") for text in strings) or any(
        "pip install" in text or "pip3 install" in text for text in strings
    )


def _fetches(node: ast.Call) -> str | None:
    """The fetching call's name (``nltk.download``), or None."""
    function = node.func
    if isinstance(function, ast.Attribute):
        owner = function.value.id if isinstance(function.value, ast.Name) else ""
        if function.attr in FETCHERS or (owner == "requests" and function.attr in REQUESTS):
            return f"{owner}.{function.attr}" if owner else function.attr
    if isinstance(function, ast.Name) and function.id in FETCHERS:
        return function.id
    return None


def _installers(tree: ast.Module) -> set[str]:
    """Names of the module's functions whose body runs pip (the starter's ``install``)."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(call, ast.Call) and _runs_pip(call) for call in ast.walk(node))
    }


def network_uses(source: str) -> tuple[list[str], list[str]]:
    """(pip uses, fetches) of a Python file's text, each as ``what (line N)``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return [], []
    installers = _installers(tree)
    pip: list[str] = []
    fetches: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if name in installers:
            pip.append(f"{name}({', '.join(map(repr, _strings(node)))}) (line {node.lineno})")
        elif _runs_pip(node) and not _inside_installer(tree, node, installers):
            pip.append(f"pip install (line {node.lineno})")
        fetched = _fetches(node)
        if fetched is not None:
            named = ", ".join(map(repr, _strings(node)))
            fetches.append(f"{fetched}({named}) (line {node.lineno})")
    return pip, fetches


def _inside_installer(tree: ast.Module, call: ast.Call, installers: set[str]) -> bool:
    """Whether ``call`` is in the body of one of the installer functions (reported by use)."""
    return any(
        isinstance(node, ast.FunctionDef) and node.name in installers and call in ast.walk(node)
        for node in ast.walk(tree)
    )


def note_network_use(dest: Path, folders: list[Path], warnings: list[str]) -> None:
    """Warn about each Python file in ``folders`` (under ``dest``) that uses the network.

    A file copied into several task's programs (one scoring program for every task) is
    named once, at its first place.
    """
    for _, path, source in python_sources(folders):
        _warn(path.relative_to(dest).as_posix(), *network_uses(source), warnings)


def python_sources(folders: list[Path]) -> Iterator[tuple[Path, Path, str]]:
    """(folder, file, text) of each readable Python file of ``folders``, in order.

    A file copied into several folders with the same path and text (one scoring program for
    every task) comes once, at its first place.
    """
    seen: set[tuple[str, str]] = set()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            try:
                source = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            key = (path.relative_to(folder).as_posix(), source)
            if key not in seen:
                seen.add(key)
                yield folder, path, source


def _warn(where: str, pip: list[str], fetches: list[str], warnings: list[str]) -> None:
    if pip:
        warnings.append(
            f"{where}: installs packages with pip at run time ({'; '.join(pip[:4])}): the "
            "sandbox has no network, so this fails there; declare the packages, at the "
            "versions the calls name, in an environment (`proctor challenge import "
            "--environment DIR`, its environment.yaml) so pip finds them installed, or "
            "remove the calls when the environment has them already"
        )
    if fetches:
        warnings.append(
            f"{where}: fetches from the network at run time ({'; '.join(fetches[:4])}): the "
            "sandbox has no network; ship what it fetches with the program, or in the "
            "environment (environment.yaml `files:`)"
        )
