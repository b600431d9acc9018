import os

import pytest
from xdsl.parser import Parser

from napkin_ir import registry


@pytest.fixture(scope="session")
def parse():
    ctx = registry.make_context()

    def _parse(text: str):
        module = Parser(ctx, text).parse_module()
        module.verify()
        return module

    return _parse


@pytest.fixture(scope="session", autouse=True)
def _compile_cache_in_a_temporary_folder(tmp_path_factory):
    """napkin_ir.compile's default cache writes here, not in the user's ~/.cache."""
    os.environ["NAPKIN_CACHE_DIR"] = str(tmp_path_factory.mktemp("napkin-cache"))


@pytest.fixture(scope="session")
def run_printed():
    """Runs printed IR of any level (its one function or kernel, as `napkin-run` finds it)
    on random inputs of `seed` and returns its outputs; the interpreters check the
    protocols as they run."""
    from napkin_ir.interpreters.run import find_entry
    from napkin_ir.passmanager import run_pipeline

    def _run(text: str, seed: int = 0):
        entry = find_entry(run_pipeline(text))
        return entry.run(entry.random_inputs(seed))

    return _run

