"""SIGKILL of the mirror process at 20 random moments, then a restart.

The mirror runs in a forked child (a real process, killed by a real SIGKILL) so that the
test does not pay interpreter start-up twenty times. Each round adds a snapshot, starts a
run, and kills it after a random number of progress events (or a random few milliseconds,
to land in start-up, locking and planning). After every kill both drives are checked: every
file under a final name has the recorded bytes and every copy marked present is there.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from archiver_app.library import Library
from archiver_app.mirror import add_destination, run_mirror, set_policy
from archiver_app.store.models import File
from archiver_app.tasks import ProgressUpdate
from tests.helpers.kill import kill_at_random
from tests.helpers.mirror_data import check_drive, make_snapshot, present_ids

ROUNDS = 20


def _mirror(lib: Library, tick: Callable[[ProgressUpdate], None]) -> object:
    return run_mirror(lib, progress=tick, progress_interval=0)


def _hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and ".archiver-staging" not in p.parts
    }


@pytest.mark.slow
def test_sigkill_at_random_moments_then_restart(library: Library, tmp_path: Path) -> None:
    rng = random.Random(20)
    drives = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        drives[name] = (add_destination(library, tmp_path / name, name).id, tmp_path / name)
    set_policy(library, copies=3, batch_size=4, parallelism=2)
    outcomes = []
    checked: dict[str, set[str]] = {name: set() for name in drives}
    for round_no in range(ROUNDS):
        sizes = [rng.choice([0, 1, 2000, 30_000, 120_000]) for _ in range(6)]
        make_snapshot(library, sizes, seed=100 + round_no, name=f"r{round_no:02d}")
        outcomes.append(kill_at_random(library, _mirror, rng, most_events=60))
        with library.session() as s:
            expected = {f.path: f.sha256 for f in s.query(File)}
        for name, (dest_id, mount) in drives.items():
            folder = mount / "Archiver" / library.id
            for rel, digest in _hashes(folder).items():
                if rel in checked[name]:
                    continue
                assert expected.get(rel) == digest, f"round {round_no}: bad {rel} on {name}"
                checked[name].add(rel)
            with library.session() as s:
                paths = {f.id: f.path for f in s.query(File)}
            for fid in present_ids(library, dest_id):
                assert paths[fid] in checked[name], f"round {round_no}: {paths[fid]} not on {name}"
    assert outcomes.count("killed") >= ROUNDS // 2, outcomes
    result = run_mirror(library)
    assert result.ok
    with library.session() as s:
        all_ids = {f.id for f in s.query(File)}
    for name, (dest_id, mount) in drives.items():
        assert present_ids(library, dest_id) == all_ids, name
        assert check_drive(library, mount, dest_id) == []
        assert list((mount / "Archiver" / library.id / ".archiver-staging").iterdir()) == []
    for rel, digest in _hashes(library.root / "collections").items():  # laptop untouched
        assert expected[f"collections/{rel}"] == digest
