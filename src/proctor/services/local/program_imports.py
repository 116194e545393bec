"""The imports of a challenge's Python programs that its environment cannot satisfy.

``challenge check`` (as problems) and ``challenge import`` (as warnings) read every Python file
of the organizer's programs (scoring, concurrent and protocol ingestion) and of the samples
(``baseline/``, ``kit/solutions/*``) with :mod:`ast`, and list each top-level module imported
that is none of: the standard library (``sys.stdlib_module_names``), a module of the
environment, a module of the program's own folders. Imports guarded by ``try: ... except
ImportError`` or by a Python-version test, and relative imports, are skipped.

The environment's modules are read from its built tree when the store holds it (every
importable name of its site folders), else from its wheel lock: each distribution's import
names (:data:`IMPORT_NAMES` where they differ from the distribution's name) and Debian's
``python3-X`` packages. A program run on the host (``environment: host``) is not checked.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from proctor.challenges import bundled_root
from proctor.environments.digests import declaration_digest
from proctor.environments.wheels import read_wheel_lock
from proctor.errors import ProctorError
from proctor.protocols.codabench_settings import IngestionProtocol
from proctor.protocols.physionet_model import PhysioNetModelProtocol
from proctor.protocols.registry import driver_for
from proctor.services.local.environments import store_of
from proctor.settings import Settings
from proctor.spec import Challenge
from proctor.spec.bundled_environments import bundled_declaration, bundled_environment_names
from proctor.spec.environment import EnvironmentSpec

IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "attrs": ("attr", "attrs"),
    "beautifulsoup4": ("bs4",),
    "biopython": ("Bio",),
    "faiss-cpu": ("faiss",),
    "fonttools": ("fontTools",),
    "future": ("future", "past", "builtins", "libfuturize", "libpasteurize"),
    "imbalanced-learn": ("imblearn",),
    "matplotlib": ("matplotlib", "mpl_toolkits", "pylab"),
    "opencv-contrib-python": ("cv2",),
    "opencv-contrib-python-headless": ("cv2",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "pillow": ("PIL",),
    "protobuf": ("google",),
    "pycryptodome": ("Crypto",),
    "pyjwt": ("jwt",),
    "pymupdf": ("fitz", "pymupdf"),
    "pyopenssl": ("OpenSSL",),
    "pyserial": ("serial",),
    "python-dateutil": ("dateutil",),
    "python-docx": ("docx",),
    "python-dotenv": ("dotenv",),
    "pytorch-lightning": ("pytorch_lightning",),
    "pyyaml": ("yaml", "_yaml"),
    "pyzmq": ("zmq",),
    "scikit-image": ("skimage",),
    "scikit-learn": ("sklearn",),
    "scikit-optimize": ("skopt",),
    "setuptools": ("setuptools", "pkg_resources", "_distutils_hack", "distutils"),
    "tensorflow-cpu": ("tensorflow",),
}
"""Distribution (normalized name) → its top-level import names, where they differ from the
name itself (lower case, ``-`` and ``.`` read as ``_``); read when no built tree is at hand."""

DISTRIBUTIONS: dict[str, str] = {
    "cv2": "opencv-python-headless",
    "google": "protobuf",
    **{
        module: dist
        for dist, modules in IMPORT_NAMES.items()
        for module in modules
        if module != dist and not dist.startswith(("opencv", "tensorflow")) and module != "google"
    },
}
"""Import name → the distribution the fix names (default: the import name itself)."""

DEBIAN_MODULES = {"pil": "PIL", "opencv": "cv2", "sklearn": "sklearn", "yaml": "yaml"}
"""Debian's ``python3-X`` packages whose module is not X."""

PYTHON2_MODULES = {
    "cPickle": "pickle", "cStringIO": "io", "StringIO": "io", "ConfigParser": "configparser",
    "Queue": "queue", "urllib2": "urllib.request", "urlparse": "urllib.parse",
    "httplib": "http.client", "__builtin__": "builtins", "commands": "subprocess",
    "Tkinter": "tkinter", "cookielib": "http.cookiejar", "HTMLParser": "html.parser",
}  # fmt: skip
"""Python 2's standard modules and their Python 3 names: a fix names the port, not a wheel."""

SAMPLE_FOLDERS = ("baseline", "kit/solutions/*")
MAX_FILES = 2000
MAX_ENTRIES = 50_000
"""Entries of one folder read for its module names (a kit's data may hold many more)."""
MAX_FILE_BYTES = 2 * 1024 * 1024
SKIPPED_FOLDERS = frozenset({"__pycache__", "__MACOSX", "node_modules"})
IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
VERSION_TESTS = re.compile(r"version_info|\bversion\b|\bPY2\b|\bPY3\b|TYPE_CHECKING")


@dataclass(frozen=True, slots=True)
class MissingImport:
    """One top-level module a program imports that its environment cannot satisfy."""

    file: str
    """The program's file, relative to the challenge folder."""
    line: int
    module: str
    role: str
    """``scoring program``, ``ingestion program`` or ``sample``."""
    environment: str
    fix: str

    @property
    def location(self) -> str:
        """``file:line``, as a problem's location."""
        return f"{self.file}:{self.line}"

    @property
    def message(self) -> str:
        """What is missing where, and the fix."""
        return (
            f"the {self.role} imports {self.module}, which environment {self.environment!r} "
            f"does not have: {self.fix}"
        )


@dataclass(frozen=True, slots=True)
class _Programs:
    """Python code run in one environment, and the folders its own modules come from."""

    role: str
    folder: Path
    environment: EnvironmentSpec
    providers: tuple[Path, ...]


def imported_modules(source: str) -> list[tuple[str, int]]:
    """(top-level module, line) of each absolute import of ``source``, guarded ones left out.

    Raises ``SyntaxError`` for a file Python 3 cannot parse.
    """
    found: list[tuple[str, int]] = []
    _visit(ast.parse(source), found)
    return found


def path_change_line(source: str) -> int | None:
    """The first line that changes ``sys.path`` (``append``, ``insert``, assignment), if any.

    An ingestion program's imports after it may be the participant's own modules.
    """
    lines = [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call | ast.Assign | ast.AugAssign) and _changes_path(node)
    ]
    return min(lines, default=None)


def _changes_path(node: ast.Call | ast.Assign | ast.AugAssign) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and _is_sys_path(func.value)
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(_is_sys_path(target) for target in targets)


def _is_sys_path(node: ast.expr) -> bool:
    if isinstance(node, ast.Subscript):
        node = node.value
    return ast.unparse(node) in ("sys.path", "path")


def _visit(node: ast.AST, found: list[tuple[str, int]]) -> None:
    """Collect the imports under ``node``, skipping guarded try bodies and version tests."""
    if isinstance(node, ast.Import):
        found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        return
    if isinstance(node, ast.ImportFrom):
        if not node.level and node.module:
            found.append((node.module.split(".")[0], node.lineno))
        return
    if isinstance(node, ast.Try | ast.TryStar) and _catches_import_errors(node):
        for child in [*node.handlers, *node.orelse, *node.finalbody]:
            _visit(child, found)
        return
    if isinstance(node, ast.If) and VERSION_TESTS.search(ast.unparse(node.test)):
        return
    for child in ast.iter_child_nodes(node):
        _visit(child, found)


def _catches_import_errors(node: ast.Try | ast.TryStar) -> bool:
    """True when one of the handlers catches an ``ImportError`` (bare, or a parent class)."""
    for handler in node.handlers:
        if handler.type is None:
            return True
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names = {ast.unparse(each).rsplit(".", 1)[-1] for each in caught}
        if names & IMPORT_ERRORS:
            return True
    return False


def python_files(folder: Path) -> Iterator[Path]:
    """The ``.py`` files under ``folder`` (hidden and cache folders left out), at most a cap."""
    count = 0
    for path in sorted(folder.rglob("*.py")):
        relative = path.relative_to(folder).parts
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative):
            continue
        if path.is_symlink() or not path.is_file():
            continue
        count += 1
        if count > MAX_FILES:
            return
        yield path


def local_modules(folders: Iterable[Path]) -> frozenset[str]:
    """The module names the folders' files and subfolders provide, at any depth (capped)."""
    names: set[str] = set()
    for folder in folders:
        if not folder.is_dir():
            continue
        names.add(folder.name)  # a package imported by its own name (``evaluation_script``)
        for count, path in enumerate(folder.rglob("*")):
            if count >= MAX_ENTRIES:
                break
            if path.is_dir():
                names.add(path.name)
            elif path.suffix in (".py", ".so", ".pyd", ".pyc"):
                names.add(path.name.split(".", 1)[0])
    return frozenset(names)


def file_imports(path: Path, *, before_path_change: bool = False) -> list[tuple[str, int]]:
    """The imports of one file; none for a file too large, unreadable or not Python 3.

    ``before_path_change``: only those above the file's first change of ``sys.path``.
    """
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return []
        source = path.read_text(encoding="utf-8", errors="replace")
        found = imported_modules(source)
        changed = path_change_line(source) if before_path_change else None
    except (OSError, SyntaxError, ValueError, RecursionError):
        return []
    return found if changed is None else [item for item in found if item[1] < changed]


def third_party_modules(folders: Iterable[Path], providers: Iterable[Path]) -> list[str]:
    """The modules the folders' programs import from neither the stdlib nor ``providers``."""
    local = local_modules(providers)
    found: set[str] = set()
    for folder in folders:
        for path in python_files(folder):
            for module, _ in file_imports(path):
                if module in sys.stdlib_module_names or module in local:
                    continue
                if module in PYTHON2_MODULES:
                    continue
                found.add(module)
    return sorted(found)


def distribution_for(module: str) -> str:
    """The distribution to ask for to import ``module`` (``yaml`` → ``pyyaml``)."""
    return DISTRIBUTIONS.get(module, module)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock_modules(spec: EnvironmentSpec) -> set[str]:
    """Import names of the wheels the lock pins (or requirements.in asks for, without a lock)."""
    dists: list[str] = []
    python = spec.python
    if python is not None:
        if python.lock.is_file():
            dists = list(read_wheel_lock(python.lock))
        elif python.requirements.is_file():
            lines = python.requirements.read_text(encoding="utf-8").splitlines()
            dists = [m.group(0) for m in map(_REQUIREMENT.match, lines) if m is not None]
    names: set[str] = set()
    for dist in dists:
        key = _normalized(dist)
        names.update(IMPORT_NAMES.get(key, (key.replace("-", "_"),)))
    for package in spec.debian.packages:
        if package.startswith("python3-"):
            stem = package.removeprefix("python3-")
            names.add(DEBIAN_MODULES.get(stem, stem.replace("-", "_")))
    return names


_REQUIREMENT = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*")


def _tree_modules(spec: EnvironmentSpec, settings: Settings | None) -> set[str] | None:
    """Every importable top-level name of the built tree's Python folders; None if not built."""
    try:
        store = store_of(settings or Settings.from_env())
        built = store.find(declaration_digest(spec))
    except (OSError, ProctorError):
        return None
    if built is None:
        return None
    rootfs = built.rootfs
    sites = [
        *rootfs.glob("usr/lib/python3*"),
        *rootfs.glob("usr/lib/python3*/lib-dynload"),
        *rootfs.glob("usr/lib/python3/dist-packages"),
        *rootfs.glob("usr/local/lib/python3*/dist-packages"),
    ]
    names: set[str] = set()
    for site in sites:
        for entry in site.iterdir() if site.is_dir() else ():
            name = entry.name.split(".", 1)[0]
            if entry.is_dir() and not entry.name.endswith((".dist-info", ".egg-info")):
                names.add(entry.name)
            elif entry.suffix in (".py", ".so") and name.isidentifier():
                names.add(name)
    return names


def environment_modules(spec: EnvironmentSpec, settings: Settings | None = None) -> set[str]:
    """The top-level modules ``spec`` offers beyond the stdlib: its built tree's and its lock's."""
    from_tree = _tree_modules(spec, settings)
    lock = _lock_modules(spec)
    return lock if from_tree is None else from_tree | lock


def _sample_folders(root: Path) -> list[Path]:
    found = []
    for pattern in SAMPLE_FOLDERS:
        found += [path for path in sorted(root.glob(pattern)) if path.is_dir()]
    return found


def _programs(challenge: Challenge) -> list[_Programs]:
    """Every Python program of the challenge with its environment (host ones left out)."""
    samples = tuple(_sample_folders(challenge.root))
    kit = (challenge.root / "kit",)
    ingestion_folders: list[Path] = []
    protocol = challenge.protocol
    found: list[_Programs] = []
    for task in challenge.tasks:
        program = task.scoring_program
        scorer_env = challenge.scorer_environment_of(task.name)
        if program is not None and scorer_env is not None:
            found.append(
                _Programs("scoring program", program.program, scorer_env, (program.program,))
            )
            beside = program.concurrent_ingestion
            if beside is not None:
                ingestion_folders.append(beside.program)
                providers = (beside.program, *samples, *kit)
                found.append(_Programs("ingestion program", beside.program, scorer_env, providers))
        task_env = challenge.environment_of(task.name)
        if isinstance(protocol, IngestionProtocol) and task.name in protocol.programs:
            folder = protocol.programs[task.name].program
            ingestion_folders.append(folder)
            if task_env is not None:
                providers = (folder, *samples, *kit)
                found.append(_Programs("ingestion program", folder, task_env, providers))
    first_env = challenge.environment_of(challenge.tasks[0].name) if challenge.tasks else None
    if first_env is not None and driver_for(protocol.kind).runs_code:
        # physionet_model: the challenge's scripts (helper_code.py...) sit beside the team code
        scripts = [protocol.scripts] if isinstance(protocol, PhysioNetModelProtocol) else []
        for sample in samples:
            providers = (sample, *ingestion_folders, *scripts)
            found.append(_Programs("sample", sample, first_env, providers))
    return found


def missing_imports(challenge: Challenge, settings: Settings | None = None) -> list[MissingImport]:
    """Each (file, module) a program imports that its environment cannot satisfy, with the fix."""
    root = challenge.root
    offered: dict[str, set[str]] = {}
    found: list[MissingImport] = []
    seen: set[tuple[str, str]] = set()
    for programs in _programs(challenge):
        spec = programs.environment
        key = spec.model_dump_json()
        if key not in offered:
            offered[key] = environment_modules(spec, settings)
        local = local_modules(programs.providers)
        for path in python_files(programs.folder):
            shown = _shown(path, root)
            ingestion = programs.role == "ingestion program"
            for module, line in file_imports(path, before_path_change=ingestion):
                if module in sys.stdlib_module_names or module in local:
                    continue
                if module in offered[key] or (shown, module) in seen:
                    continue
                seen.add((shown, module))
                fix = _fix(module, spec, root)
                found.append(MissingImport(shown, line, module, programs.role, spec.name, fix))
    return found


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _fix(module: str, spec: EnvironmentSpec, root: Path) -> str:
    """How the organizer makes ``module`` importable in ``spec`` (or ports the program)."""
    if module in PYTHON2_MODULES:
        return (
            f"{module} is a Python 2 module: port the program to Python 3 "
            f"(use {PYTHON2_MODULES[module]})"
        )
    dist = distribution_for(module)
    python = spec.python
    if python is not None and python.requirements.resolve().is_relative_to(root.resolve()):
        shown = _shown(python.requirements.resolve(), root.resolve())
        return f"add {dist} to {shown}, then `proctor env lock {root}` and build it once"
    others = [name for name in _bundled_with(module) if name != spec.name]
    also = (
        f", or choose the bundled environment {' or '.join(others)}, which has it "
        f"(`--environment {others[0]}` at import, `environment: {others[0]}` in challenge.yaml)"
        if others
        else ""
    )
    if python is None and not _is_bundled(spec):
        return (
            f"declare `python: {{requirements: environment/requirements.in, lock: "
            f"environment/requirements.lock}}` in the environment and add {dist} there{also}"
        )
    return (
        f"add {dist} to environment/requirements.in of an environment of your own (`proctor "
        f"challenge import --environment DIR`, or an `environment:` block in challenge.yaml; "
        f"docs/environments.md){also}"
    )


def _is_bundled(spec: EnvironmentSpec) -> bool:
    python = spec.python
    place = python.requirements if python is not None else spec.lock
    return place is not None and place.resolve().is_relative_to(bundled_root())


def _bundled_with(module: str) -> list[str]:
    """The bundled environments whose lock offers ``module``."""
    found = []
    for name in bundled_environment_names():
        try:
            spec, file = bundled_declaration(name, bundled_root(), "environment")
        except ProctorError:
            continue
        python = spec.python
        if python is not None:
            folder = file.parent
            spec = spec.model_copy(
                update={
                    "python": python.model_copy(
                        update={
                            "requirements": folder / python.requirements,
                            "lock": folder / python.lock,
                        }
                    )
                }
            )
        if module in _lock_modules(spec):
            found.append(name)
    return found


def unlocked_environments(challenge: Challenge) -> list[tuple[str, str]]:
    """(file, message) of each environment declared in the challenge folder with no wheel lock.

    A scaffolded environment (``challenge import`` of an image Proctor does not know) has its
    ``requirements.in`` and no lock until the organizer writes one.
    """
    root = challenge.root.resolve()
    found: dict[str, str] = {}
    specs = [challenge.environment_of(task.name) for task in challenge.tasks]
    specs += [challenge.scorer_environment_of(task.name) for task in challenge.tasks]
    for spec in specs:
        python = spec.python if spec is not None else None
        if spec is None or python is None or python.lock.is_file():
            continue
        if not python.lock.resolve().is_relative_to(root):
            continue
        shown = _shown(python.lock.resolve(), root)
        found[shown] = (
            f"environment {spec.name!r} has no wheel lock: edit "
            f"{_shown(python.requirements.resolve(), root)}, then write the lock with `proctor "
            f"env lock {challenge.root}` and build it once with `proctor env build "
            f"{challenge.root}`"
        )
    return sorted(found.items())


def environment_warnings(challenge: Challenge) -> list[str]:
    """The gaps of the challenge's environments, as an import's warnings (``file:line: ...``)."""
    found = [f"{where}: {message}" for where, message in unlocked_environments(challenge)]
    return found + [f"{gap.location}: {gap.message}" for gap in missing_imports(challenge)]
