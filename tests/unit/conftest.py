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
