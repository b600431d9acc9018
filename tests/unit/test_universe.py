"""napkin's dialects, passes and targets reach xDSL's tools through the xdsl.universe entry point."""

from xdsl.universe import Universe

from napkin_ir import registry


def test_the_multiverse_holds_napkin():
    multiverse = Universe.get_multiverse()
    assert set(registry.napkin_dialects()) <= set(multiverse.all_dialects)
    assert set(registry.napkin_passes()) <= set(multiverse.all_passes)
    assert set(registry.napkin_targets()) <= set(multiverse.all_targets)
    assert multiverse.all_passes["napkin-sm90"]().name == "napkin-sm90"
    assert multiverse.all_dialects["ncd"]().name == "ncd"
