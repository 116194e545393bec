import os
from pathlib import Path

from proctor.protocols.outputs import collect_output


def test_a_regular_file_is_collected(tmp_path: Path) -> None:
    (tmp_path / "r1.vec").write_bytes(b"0.5\n")
    found = collect_output(tmp_path, "r1.vec", max_bytes=100)
    assert found.data == b"0.5\n"


def test_a_symlink_to_a_host_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("reference values")
    home = tmp_path / "home"
    home.mkdir()
    (home / "r1.vec").symlink_to(secret)
    found = collect_output(home, "r1.vec", max_bytes=100)
    assert found.data is None
    assert "symbolic link" in found.problem


def test_a_symlinked_folder_on_the_way_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "x.vec").write_text("1")
    home = tmp_path / "home"
    home.mkdir()
    (home / "out").symlink_to(tmp_path / "real")
    assert collect_output(home, "out/x.vec", max_bytes=100).data is None


def test_a_fifo_is_refused_without_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "r1.vec")
    found = collect_output(tmp_path, "r1.vec", max_bytes=100)
    assert found.data is None
    assert "not a regular file" in found.problem


def test_an_oversized_output_is_refused(tmp_path: Path) -> None:
    (tmp_path / "r1.vec").write_bytes(b"0" * 101)
    found = collect_output(tmp_path, "r1.vec", max_bytes=100)
    assert found.data is None
    assert "limit" in found.problem


def test_a_missing_output_says_so(tmp_path: Path) -> None:
    found = collect_output(tmp_path, "r1.vec", max_bytes=100)
    assert found.problem == "r1.vec: the entry wrote no such file"


def test_path_escapes_are_refused(tmp_path: Path) -> None:
    assert collect_output(tmp_path, "../x", max_bytes=10).data is None
    assert collect_output(tmp_path, "/etc/passwd", max_bytes=10).data is None


def test_an_output_is_copied_to_the_run_folder_in_chunks(tmp_path: Path) -> None:
    """Hardening item 10: exam outputs were all held in memory until the stage ended."""
    import tracemalloc

    from proctor.protocols.outputs import collect_output_to

    home = tmp_path / "home"
    home.mkdir()
    (home / "r1.vec").write_bytes(b"0.500\n" * (10 << 20))  # 60 MiB
    tracemalloc.start()
    problem = collect_output_to(home, "r1.vec", tmp_path / "stored" / "r1.vec", max_bytes=1 << 30)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert problem is None
    assert (tmp_path / "stored" / "r1.vec").stat().st_size == 60 << 20
    assert peak < 4 << 20


def test_an_output_over_the_limit_leaves_nothing_stored(tmp_path: Path) -> None:
    from proctor.protocols.outputs import collect_output_to

    (tmp_path / "big.vec").write_bytes(b"x" * 5000)
    problem = collect_output_to(tmp_path, "big.vec", tmp_path / "s" / "big.vec", max_bytes=4096)
    assert problem is not None and "over the 4096-byte limit" in problem
    assert not (tmp_path / "s" / "big.vec").exists()
