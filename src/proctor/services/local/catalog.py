"""Find challenges (a folder, or a bundled one by name) and write participants' starting kits."""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

from proctor.challenges import bundled_names, bundled_root, folder_name, training_writer
from proctor.errors import ConfigError, UsageError
from proctor.protocols.base import HIDDEN, PUBLIC, FilesDriver, ProtocolDriver
from proctor.protocols.registry import driver_for
from proctor.resolve import load_challenge
from proctor.services.local.kit_replica import (
    REPLICA_FOLDER,
    plan_copies,
    readme_section,
    write_replica,
)
from proctor.spec import CHALLENGE_FILE, Challenge, Phase, ProtocolSettings, Task
from proctor.wording import noun, plural

KIT_README = "KIT.md"
BASELINE_FOLDER = "baseline"
KIT_EXTRAS = "kit"
"""A challenge's folder of extra kit files (training data, the baseline's program), copied into
the kit's root as they are."""


@dataclass(frozen=True, slots=True)
class ChallengeSummary:
    """One line of ``proctor challenges``."""

    name: str
    title: str
    protocol: str
    tasks: tuple[str, ...]
    phases: tuple[str, ...]


def challenge_location(ref: str | Path) -> Path:
    """The folder ``ref`` names: a path that exists, or the bundled challenge called ``ref``."""
    path = Path(ref)
    if path.exists():
        return path
    if str(ref) in bundled_names():
        return bundled_root() / folder_name(str(ref))
    known = ", ".join(bundled_names()) or "none"
    raise UsageError(
        f"no challenge folder or bundled challenge called {str(ref)!r} (bundled: {known})"
    )


def resolve_challenge(ref: str) -> Challenge:
    """Load the challenge at folder ``ref``, or the bundled challenge called ``ref``."""
    challenge = load_challenge(challenge_location(ref))
    check_references(challenge)
    return challenge


def check_references(challenge: Challenge) -> None:
    """Every hidden case has its reference, so a missing one is found before an exam.

    Scorer names, metrics and the leaderboard metric were checked when the file loaded. A
    scoring program names no reference file per case (it reads its references as it likes).
    """
    path = challenge.root / CHALLENGE_FILE
    driver = driver_for(challenge.protocol.kind)
    for index, task in enumerate(challenge.tasks):
        if task.hidden_inputs is None or task.hidden_references is None:
            continue
        template = task.scorer_declaration.reference
        if not template:
            continue
        cases = driver.list_cases(challenge.protocol, task.hidden_inputs)
        missing = [
            name
            for name in (template.format(record=case) for case in cases)
            if not (task.hidden_references / name).exists()
        ]
        if missing:
            shown = ", ".join(missing[:5]) + (
                f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            )
            raise ConfigError(
                f"{plural(len(missing), 'hidden record')} {noun(len(missing), 'has', 'have')} "
                f"no reference file in "
                f"{task.hidden_references}: {shown}",
                path=path,
                location=f"tasks[{index}].hidden_references",
            )
    _check_stand_ins(challenge, driver, path)
    _check_determinism_cases(challenge, driver, path)


def _check_stand_ins(challenge: Challenge, driver: type[ProtocolDriver], path: Path) -> None:
    """Each stand-in is shaped as its task's hidden data: cases, and a reference for each."""
    for index, task in enumerate(challenge.tasks):
        stand_in = task.kit.stand_in
        if stand_in is None:
            continue
        where = f"tasks[{index}].kit.stand_in"
        cases = driver.list_cases(challenge.protocol, stand_in.inputs)
        if not cases:
            raise ConfigError(
                f"{stand_in.inputs} holds no case of protocol {challenge.protocol.kind!r}: lay "
                "it out as the task's hidden inputs",
                path=path,
                location=f"{where}.inputs",
            )
        missing = _unreferenced(task, driver, challenge.protocol, cases)
        if missing:
            raise ConfigError(
                f"{plural(len(missing), 'stand-in case')} {noun(len(missing), 'has', 'have')} "
                f"no reference file in "
                f"{stand_in.references}: {', '.join(missing[:5])}",
                path=path,
                location=f"{where}.references",
            )


def _unreferenced(
    task: Task, driver: type[ProtocolDriver], protocol: ProtocolSettings, cases: list[str]
) -> list[str]:
    """The stand-in's cases without a reference, as the hidden cases have theirs.

    By the scorer's reference template; for a scoring program (no template), where every
    hidden case has a reference named after it, every stand-in case must too.
    """
    stand_in = task.kit.stand_in
    if stand_in is None:
        return []
    template = task.scorer_declaration.reference
    if template:
        names = [template.format(record=case) for case in cases]
        return [name for name in names if not (stand_in.references / name).exists()]
    if task.hidden_inputs is None or task.hidden_references is None:
        return []

    def named(case: str, folder: Path) -> bool:
        return any(item.name.startswith(case) for item in folder.iterdir())

    hidden = driver.list_cases(protocol, task.hidden_inputs)
    if not hidden or not all(named(case, task.hidden_references) for case in hidden):
        return []
    return [case for case in cases if not named(case, stand_in.references)]


def _check_determinism_cases(
    challenge: Challenge, driver: type[ProtocolDriver], path: Path
) -> None:
    """A phase cannot rerun more exam cases than a task of it has hidden records."""
    for index, phase in enumerate(challenge.phases):
        for name in phase.tasks:
            inputs = challenge.task(name).hidden_inputs
            if not phase.determinism_cases or inputs is None:
                continue
            hidden = len(driver.list_cases(challenge.protocol, inputs))
            if phase.determinism_cases > hidden:
                raise ConfigError(
                    f"{phase.determinism_cases} is more than the {hidden} hidden records of "
                    f"task {name!r}: lower it",
                    path=path,
                    location=f"phases[{index}].determinism_cases",
                )


def list_challenges() -> list[ChallengeSummary]:
    """Every bundled challenge, loaded and checked."""
    out = []
    for name in bundled_names():
        challenge = load_challenge(bundled_root() / folder_name(name))
        check_references(challenge)
        out.append(
            ChallengeSummary(
                name=challenge.name,
                title=challenge.title,
                protocol=challenge.protocol.kind,
                tasks=tuple(t.name for t in challenge.tasks),
                phases=tuple(p.name for p in challenge.phases),
            )
        )
    return out


GENERATED_SECONDS = 60
GENERATED_RECORDS = 8
"""What a kit generates when only one of --seconds/--records is given: the bundled shape."""


@dataclass(frozen=True, slots=True)
class FreshRecords:
    """Training records a kit generates instead of copying the bundled ones."""

    seconds: int
    records: int


def write_kit(ref: str, dest: Path) -> list[Path]:
    """Write a participant's starting kit: ``entry/``, ``data/``, ``challenge/``, ``README.md``.

    ``entry/`` is a copy of the challenge's ``baseline/`` (none when it ships none, as an
    imported bundle without ``solutions``); ``README.md`` its ``KIT.md``, or a README made
    from the challenge (:func:`generic_kit_readme`) when it ships none.

    Only public data is copied (once, into ``data/``, when every task shares its public
    inputs). ``challenge/`` is the challenge's replica (``kit_replica``): ``proctor run
    entry --challenge challenge`` from the kit's folder. Refuses a non-empty ``dest``.
    """
    return write_kit_with(ref, dest, None)[0]


def write_kit_with(ref: str, dest: Path, fresh: FreshRecords | None) -> tuple[list[Path], str]:
    """``write_kit``, with ``data/`` holding newly generated training records when ``fresh``.

    Only ``physionet2018`` generates records (the bundled ones are what ``make demo``
    evaluates); the second value describes them (their label shares), "" when copied.
    """
    challenge = resolve_challenge(ref)
    writer = training_writer(challenge.name) if fresh is not None else None
    if fresh is not None and writer is None:
        raise UsageError(
            f"challenge {challenge.name!r} has no record generator: --seconds and --records "
            "apply to physionet2018 only"
        )
    plan_copies(challenge)  # refuses a challenge whose kit would hold hidden data: before writing
    baseline = challenge.root / BASELINE_FOLDER
    _check_kit_folder(dest)
    entry = [dest / "entry"] if baseline.is_dir() else []
    if entry:
        shutil.copytree(baseline, entry[0], ignore=shutil.ignore_patterns("__pycache__"))
    described = ""
    if writer is not None and fresh is not None:
        described = writer(dest / "data", fresh.seconds, fresh.records)
        written = [*entry, dest / "data"]
    else:
        written = [*entry, *_copy_data(challenge, dest)]
    written += _copy_extras(challenge, dest)
    replica = write_replica(challenge, dest / REPLICA_FOLDER)
    with (dest / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(entry_section(challenge) + readme_section(replica))
    return [*written, replica.folder], described


def _check_kit_folder(dest: Path) -> None:
    """Refuse a ``dest`` that is a file, not empty, or not writable."""
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"{dest} is a file: choose a new folder for the kit")
    if dest.exists() and any(dest.iterdir()):
        raise UsageError(f"{dest} is not empty: choose a new folder for the kit")
    try:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / ".proctor-kit-check").touch()
        (dest / ".proctor-kit-check").unlink()
    except OSError as err:
        raise UsageError(f"cannot write the kit into {dest}: {err.strerror}") from None


def _copy_extras(challenge: Challenge, dest: Path) -> list[Path]:
    """The kit's extra files and its README, copied into ``dest``."""
    written = []
    extras = challenge.root / KIT_EXTRAS
    if extras.is_dir():
        for item in sorted(extras.iterdir()):
            if item.name != "__pycache__":
                _copy_item(item, dest / item.name)
                written.append(dest / item.name)
    readme = challenge.root / KIT_README
    if readme.is_file():
        shutil.copy2(readme, dest / "README.md")
    else:
        text = generic_kit_readme(challenge, entry=(dest / "entry").is_dir())
        (dest / "README.md").write_text(text, encoding="utf-8")
    written.append(dest / "README.md")
    return written


def _entry_line(entry: bool) -> str:
    if entry:
        return "- `entry/`: the challenge's baseline entry, a working example to start from.\n"
    return "- No baseline entry: the challenge ships none (see its pages for the format).\n"


def _layout_line(entry: bool) -> str:
    return " Keep the layout of `entry/`." if entry else ""


def generic_kit_readme(challenge: Challenge, *, entry: bool = True) -> str:
    """The kit's README of a challenge that ships no ``KIT.md``: what is where, how to submit.

    It names the challenge, never the folder it was installed from (which holds hidden data).
    ``entry``: whether the kit holds the baseline as ``entry/``.
    """
    driver = driver_for(challenge.protocol.kind)
    metrics = "; ".join(
        f"`{metric.name}` ({metric.direction}{': ' + metric.summary if metric.summary else ''})"
        for task in challenge.tasks
        for metric in task.scorer_declaration.metrics
        if metric.rankable
    )
    return f"""# {challenge.name} starting kit: {challenge.title}

{challenge.description}

## What is in this kit

{_entry_line(entry)}- `data/`: the public data.

## The entry

Protocol `{challenge.protocol.kind}`: {driver.summary}.{_layout_line(entry)}

## Scores

{metrics or "See the challenge's page."}

## Submitting

Zip the entry's content and submit it to the challenge's server:
`proctor submit entry.zip --challenge {challenge.name} --server URL --token TOKEN`
(an empty file `DRYRUN` in the entry stops after the quiz, a check on public data).
"""


def entry_section(challenge: Challenge) -> str:
    """The kit README's section on what the entry ships, from the protocol's settings.

    Written into every kit, the organizer's ``KIT.md`` too, so that it follows the YAML; ""
    when the protocol has nothing to add to its summary.
    """
    contract = driver_for(challenge.protocol.kind).entry_contract(challenge.protocol)
    if not contract:
        return ""
    text = "\n\n".join(textwrap.fill(part, width=92) for part in contract.split("\n\n"))
    return f"\n## What your entry ships\n\n{text}\n"


def _copy_item(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copy2(source, target)


def _copy_data(challenge: Challenge, dest: Path) -> list[Path]:
    """The public data of every task into ``DEST/data``.

    Where code runs, or where a files protocol has no public split (``results``: the hidden
    inputs may be an ingestion program's), the public inputs (``data/``, or ``data/TASK/``
    with several tasks).
    Where the upload is predictions, the inputs of both splits are public: each case's
    folder goes under ``data/PUBLIC_FOLDER/`` and ``data/HIDDEN_FOLDER/``, as the upload lays
    them out (the hidden references stay behind).
    """
    driver = driver_for(challenge.protocol.kind)
    if not issubclass(driver, FilesDriver) or not driver.scores_public_split:
        return _copy_public_inputs(challenge, dest)
    written = []
    for task in challenge.tasks:
        for split, inputs in ((PUBLIC, task.public_inputs), (HIDDEN, task.hidden_inputs)):
            if inputs is None:
                continue
            target = dest / "data" / driver.split_folder(challenge.protocol, split) / inputs.name
            if target not in written:  # tasks sharing a case (EvalAI's splits) share its folder
                written.append(target)
            shutil.copytree(inputs, target, dirs_exist_ok=True)
    return written


def copy_public_data(challenge: Challenge, phase: Phase, dest: Path) -> list[Path]:
    """The public data of ``phase``'s tasks into ``DEST/data``, laid out as in the kit."""
    tasks = tuple(challenge.task(name) for name in phase.tasks)
    return _copy_data(challenge.model_copy(update={"tasks": tasks}), dest)


def _copy_public_inputs(challenge: Challenge, dest: Path) -> list[Path]:
    """The public inputs: ``data/`` once when every task shares them, else ``data/TASK/``."""
    public = list(dict.fromkeys(task.public_inputs for task in challenge.tasks))
    if len(public) == 1:
        shutil.copytree(public[0], dest / "data")
        return [dest / "data"]
    written = []
    for task in challenge.tasks:
        target = dest / "data" / task.name
        shutil.copytree(task.public_inputs, target)
        written.append(target)
    return written


def bundled_challenges() -> list[Challenge]:
    """Every bundled challenge, loaded and checked."""
    return [resolve_challenge(str(bundled_root() / folder_name(name))) for name in bundled_names()]
