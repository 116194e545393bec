"""The python_model harness: runs INSIDE the sandbox with the environment's ``python3 -I``.

Three modes, one process each::

    check    import model.py and check Model has train, save, load and predict (prep)
    train    load train.data/train.solution/info.json, then Model(info).train(X, y); save(dir)
    predict  load test.data/info.json, then Model(info).load(dir); predict(X) -> CSV "label"

The data is loaded first; only then does the harness write one byte on the clock pipe named by
``PROCTOR_CLOCK_FD`` (the host's wall clock of the budget starts at that byte) and import the
entry's module, so no participant code runs before the clock starts. The budget is enforced
by the host from outside (it kills the process tree); nothing here times anything.

``python3 -I`` ignores ``PYTHONPATH`` and the user's site folder, so a ``.pth`` or
``sitecustomize`` the entry ships cannot run at start-up: the folders of ``PYTHONPATH`` (the
entry's own wheels) are added with ``site.addsitedir`` after the clock started.

A problem the participant must fix is the last stderr line ``proctor-harness: MESSAGE`` with
exit status 3; a dataset that cannot be loaded (no entry code ran) exits 4. Only the standard
library is imported before the data is read; numpy and pandas come from the environment
(``importlib``, so this file type-checks without pandas).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import site
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

PROBLEM_PREFIX = "proctor-harness: "
PROBLEM_STATUS = 3
DATA_STATUS = 4
METHODS = ("train", "save", "load", "predict")
CLOCK_VARIABLE = "PROCTOR_CLOCK_FD"
TYPE_MAP = {"num": "float64", "cat": "str", "multi-cat": "str", "time": "str"}


class EntryProblemError(Exception):
    """Something the participant must fix (shown as the case's problem)."""


class DataProblemError(Exception):
    """The dataset could not be loaded (the organizers' side: no entry code ran yet)."""


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="model_harness")
    parser.add_argument("mode", choices=("check", "train", "predict"))
    parser.add_argument("--entry", type=Path, required=True)
    parser.add_argument("--module", default="model.py")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--output", type=Path)
    return parser.parse_args(argv)


def _start_clock() -> None:
    """Tell the host the data is loaded: its budget clock starts now."""
    fd_text = os.environ.pop(CLOCK_VARIABLE, None)
    if fd_text is None:
        return
    fd = int(fd_text)
    os.write(fd, b"1")
    os.close(fd)


def read_info(data: Path) -> dict[str, Any]:
    """The dataset's ``info.json`` (its task, budgets and column schema)."""
    info = json.loads((data / "info.json").read_text(encoding="utf-8"))
    if not isinstance(info, dict) or not isinstance(info.get("schema"), dict):
        raise ValueError(f"{data / 'info.json'}: expected an object with a 'schema' object")
    return info


def read_table(path: Path, schema: dict[str, str]) -> Any:
    """A ``.data`` table as a pandas DataFrame: num as float64, time as datetimes (from ms)."""
    pd = importlib.import_module("pandas")
    dtypes = {name: TYPE_MAP.get(kind, "str") for name, kind in schema.items()}
    frame = pd.read_csv(path, sep="\t", dtype=dtypes, keep_default_na=True)
    for name, kind in schema.items():
        if kind == "time" and name in frame:
            millis = pd.to_numeric(frame[name], errors="coerce")
            frame[name] = pd.to_datetime(millis, unit="ms")
    return frame


def read_labels(path: Path) -> Any:
    """The ``label`` column of a ``.solution`` file as a pandas Series."""
    pd = importlib.import_module("pandas")
    return pd.read_csv(path)["label"]


def load_data(mode: str, data: Path) -> tuple[dict[str, Any], Any, Any]:
    """(info, X, y) of ``mode``: the training table and labels, or the test table."""
    info = read_info(data)
    schema = info["schema"]
    if mode == "train":
        return info, read_table(data / "train.data", schema), read_labels(data / "train.solution")
    return info, read_table(data / "test.data", schema), None


def _entry_paths(entry: Path) -> None:
    """Make the entry's folder and its own wheels importable (after the clock started)."""
    sys.path.insert(0, str(entry))
    for folder in reversed(os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        if folder:
            site.addsitedir(folder)
            sys.path.remove(folder)
            sys.path.insert(0, folder)


def import_model(entry: Path, module: str) -> Any:
    """The entry's ``Model`` class, checked for the four methods."""
    path = entry / module
    if not path.is_file():
        raise EntryProblemError(f"{module} is missing from the entry")
    spec = importlib.util.spec_from_file_location(Path(module).stem, path)
    if spec is None or spec.loader is None:
        raise EntryProblemError(f"{module} cannot be imported")
    loaded: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    model = getattr(loaded, "Model", None)
    if not isinstance(model, type):
        raise EntryProblemError(f"{module} defines no class Model: define class Model(info)")
    missing = [name for name in METHODS if not callable(getattr(model, name, None))]
    if missing:
        listed = ", ".join(missing)
        raise EntryProblemError(
            f"{module}: class Model has no method {listed}: define "
            "train(X, y), save(directory), load(directory) and predict(X)"
        )
    return model


def _scores(prediction: Any, rows: int) -> list[float]:
    """The prediction as one float per test row (a Series, array, list or one-column frame)."""
    values = getattr(prediction, "values", prediction)
    shape = getattr(values, "shape", None)
    if shape is not None and len(shape) == 2 and shape[1] == 1:
        values = values[:, 0]
    try:
        out = [float(value) for value in values]
    except (TypeError, ValueError) as err:
        raise EntryProblemError(f"predict must return one number per test row ({err})") from None
    if len(out) != rows:
        raise EntryProblemError(f"predict returned {len(out)} values for {rows} test rows")
    if not all(math.isfinite(value) for value in out):
        raise EntryProblemError("predict returned a value that is not finite (NaN or infinity)")
    return out


def write_prediction(path: Path, scores: list[float]) -> None:
    """The prediction CSV: header ``label``, one score per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("label\n" + "".join(f"{value!r}\n" for value in scores), encoding="utf-8")


def run(args: argparse.Namespace) -> None:
    """Load the data, start the clock, then run the entry's part of ``args.mode``."""
    info: dict[str, Any] = {}
    x = y = None
    if args.mode != "check":
        try:
            info, x, y = load_data(args.mode, args.data)
        except Exception as err:
            raise DataProblemError(f"{type(err).__name__}: {err}") from err
    _start_clock()
    _entry_paths(args.entry)
    model_class = import_model(args.entry, args.module)
    if args.mode == "check":
        return
    model = model_class(info)
    if args.mode == "train":
        model.train(x, y)
        args.state.mkdir(parents=True, exist_ok=True)
        model.save(str(args.state))
        return
    model.load(str(args.state))
    rows = len(x) if x is not None else 0
    write_prediction(args.output, _scores(model.predict(x), rows))


def entry_traceback(err: BaseException) -> str:
    """``err``'s traceback with the entry's frames only (the harness's and importlib's left out).

    A participant reads it: frames of this file and of the import machinery say nothing they
    can fix.
    """
    shown = traceback.TracebackException.from_exception(err)
    for part in _chain(shown):
        kept = [frame for frame in part.stack if not _harness_frame(frame.filename)]
        part.stack = traceback.StackSummary.from_list(kept)
    return "".join(shown.format())


def _chain(shown: traceback.TracebackException) -> list[traceback.TracebackException]:
    """``shown`` and the exceptions it was raised from or during."""
    found = []
    part: traceback.TracebackException | None = shown
    while part is not None and part not in found:
        found.append(part)
        part = part.__cause__ or part.__context__
    return found


def _harness_frame(filename: str) -> bool:
    return (
        filename.startswith("<frozen importlib")
        or Path(filename).resolve() == Path(__file__).resolve()
    )


def main(argv: list[str]) -> int:
    """Run one mode; exit 3 with a ``proctor-harness:`` line for what the entry must fix."""
    args = _arguments(argv)
    try:
        run(args)
    except DataProblemError as problem:
        print(PROBLEM_PREFIX + str(problem)[:500], file=sys.stderr)
        return DATA_STATUS
    except EntryProblemError as problem:
        print(PROBLEM_PREFIX + str(problem), file=sys.stderr)
        return PROBLEM_STATUS
    except Exception as err:  # the entry's own exception: its traceback, then one line
        print(entry_traceback(err), end="", file=sys.stderr)
        print(f"{PROBLEM_PREFIX}{type(err).__name__}: {err}"[:500], file=sys.stderr)
        return PROBLEM_STATUS
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
