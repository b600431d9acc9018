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
