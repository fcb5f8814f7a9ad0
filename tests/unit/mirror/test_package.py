"""The mirror package's lazy names (PEP 562) stay the functions they name."""

from __future__ import annotations

from pathlib import Path

import archiver_app.mirror as mirror


def test_no_lazy_name_is_also_a_submodule() -> None:
    # Importing a submodule sets the package attribute of its name to the module: a lazy
    # name ``offload`` became the module once ``restore`` (same module) had been loaded, and
    # an offload job then failed with "'module' object is not callable".
    submodules = {p.stem for p in Path(mirror.__file__).parent.glob("*.py")}
    assert not set(mirror._WHERE) & submodules
    assert not set(mirror.__all__) & submodules


def test_a_lazy_name_is_the_function_after_its_module_was_loaded() -> None:
    from archiver_app.mirror import offload as module
    from archiver_app.mirror import restore

    assert callable(restore) and restore is module.restore
    assert callable(mirror.run_mirror)
