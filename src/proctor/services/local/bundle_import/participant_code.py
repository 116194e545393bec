"""Programs that may run a participant's code: found at import, named in a warning.

A scoring or ingestion program that unpickles a file (``pickle.load``, ``joblib.load``,
``dill.load``, ``torch.load`` without ``weights_only=True``, ``np.load(...,
allow_pickle=True)``, ``pd.read_pickle``) runs whatever code a participant put in that file,
inside the program, which holds the references (or the hidden inputs) and writes the score.
So does a scoring program importing a module from a folder it is given (``sys.path.insert``
then ``import``, ``importlib.util.spec_from_file_location``, ``runpy.run_path``): on Codabench
that folder is the submission's. Codabench runs such programs the same way; the import keeps
them and warns, naming the file and the line. An ingestion program imports the submission's
code by design (it runs in the exam, without the references): only its unpickling is named.
"""

from __future__ import annotations

import ast
from pathlib import Path

from proctor.services.local.bundle_import.network import python_sources

UNPICKLERS = frozenset({"pickle", "cPickle", "_pickle", "joblib", "dill", "cloudpickle"})
"""Modules whose ``load``/``loads`` turn a file into objects by running code it names."""
IMPORTERS = frozenset(
    {"spec_from_file_location", "load_source", "load_module", "run_path", "import_module"}
)
"""Functions that import or run a module from a path or a name found at run time."""
SEARCH_PATH = frozenset({"insert", "append", "extend"})
OWN_FOLDER = ("__file__", "program")
"""Words of a path argument naming the program's own folder (``os.path.dirname(__file__)``)."""


def _name(node: ast.expr) -> str:
    """``a.b.c`` of an attribute chain or name, ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _name(node.value)
        return f"{owner}.{node.attr}" if owner else ""
    return ""


def _keyword(node: ast.Call, key: str) -> ast.expr | None:
    return next((item.value for item in node.keywords if item.arg == key), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _unpickles(node: ast.Call) -> str | None:
    """The unpickling call's name (``pickle.load``), or None."""
    name = _name(node.func)
    owner, _, function = name.rpartition(".")
    if function in ("load", "loads") and owner.split(".")[-1] in UNPICKLERS:
        return name
    if function == "read_pickle":
        return name
    if function == "load" and owner.split(".")[-1] == "torch":
        return None if _is_true(_keyword(node, "weights_only")) else name
    if function == "load" and owner.split(".")[-1] in ("np", "numpy"):
        return f"{name}(allow_pickle=True)" if _is_true(_keyword(node, "allow_pickle")) else None
    return None


def _own(node: ast.Call) -> bool:
    """True when the call's arguments are constants or name the program's own folder."""
    text = " ".join(ast.unparse(item) for item in node.args)
    return all(isinstance(item, ast.Constant) for item in node.args) or any(
        word in text for word in OWN_FOLDER
    )


def _imports(node: ast.Call) -> str | None:
    """The call importing code from a path found at run time (``sys.path.insert``), or None."""
    name = _name(node.func)
    owner, _, function = name.rpartition(".")
    search_path = function in SEARCH_PATH and (owner == "sys.path" or owner.endswith(".sys.path"))
    if (search_path or function in IMPORTERS or name == "__import__") and not _own(node):
        return name
    return None


def participant_code_uses(source: str, *, scoring: bool) -> list[str]:
    """The calls of a Python file's text that may run a participant's code, ``what (line N)``."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        what = _unpickles(node) or (_imports(node) if scoring else None)
        if what is not None:
            found.append(f"{what} (line {node.lineno})")
    return sorted(found, key=lambda text: int(text.rsplit(" ", 1)[1].rstrip(")")))


def note_participant_code(dest: Path, folders: list[Path], warnings: list[str]) -> None:
    """Warn about each Python file of ``folders`` (under ``dest``) running a participant's code.

    A folder named ``*-ingestion`` is an ingestion program (importing code is its job); a file
    copied into several programs is named once, at its first place.
    """
    for folder, path, source in python_sources(folders):
        scoring = not folder.name.endswith("-ingestion")
        uses = participant_code_uses(source, scoring=scoring)
        if uses:
            warnings.append(_warning(path.relative_to(dest).as_posix(), uses, scoring))


def _warning(where: str, uses: list[str], scoring: bool) -> str:
    holds = (
        "which holds the references and writes the score"
        if scoring
        else "which holds the hidden input data"
    )
    return (
        f"{where}: may run a participant's code ({'; '.join(uses[:4])}): a file unpickled or "
        f"a module imported from a submission runs the participant's code inside this "
        f"program, {holds} (Codabench runs it the same way); read plain data instead (JSON, "
        "CSV, np.load without allow_pickle)"
        + (", or run the participant's code in an ingestion program" if scoring else "")
    )
